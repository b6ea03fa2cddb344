/**
 * Stead: a durable runtime for long-running AI agents and workflows.
 *
 *   const stead = createStead();                       // embedded SQLite in ./.stead/stead.db
 *   export const triage = workflow("triage", async (ctx, input) => { ... ctx.step(...) ... });
 *   await stead.runs.start(triage, input);             // any worker with `triage` runs it
 *   stead.worker({ definitions: [triage] }).start();
 */
export { createStead } from "./stead/create-stead.js";
export { Stead } from "./stead/stead.js";
export type { SteadOptions, StartOptions, FollowOptions, EncryptionOptions } from "./stead/stead.js";
export type { SteadRuns } from "./stead/namespaces/runs.js";
export type { SteadSessions } from "./stead/namespaces/sessions.js";
export type { SteadWorkspaces } from "./stead/namespaces/workspaces.js";
export type { SteadDefinitions } from "./stead/namespaces/definitions.js";
export type { SteadWaits } from "./stead/namespaces/waits.js";
export type { SteadHolds } from "./stead/namespaces/holds.js";
export type { SteadKeys } from "./stead/namespaces/keys.js";
export type { SteadAdmin } from "./stead/namespaces/admin.js";
export { createKeyFile, envKeyProvider, keyFileProvider, localKey, type KeyProvider } from "./store/encryption/key-providers.js";
export type { RedactionOptions } from "./redaction/redactor.js";
export { workflow, isDefinition } from "./engine/definitions/definition.js";
export type { WorkflowDefinition, WorkflowOptions, AnyDefinition } from "./engine/definitions/definition.js";
export type { WorkflowContext, StepOptions, StepInfo, ReconcileResult, ApprovalDecision, Recovery, DeclaredInput, InputIssue } from "./engine/context-types.js";
export type { InputSchema, InputOf, OutputOf } from "./engine/definitions/input-schema.js";
export type { DefinitionView, DefinitionVersion, ServingWorker } from "./engine/definitions/served-definitions.js";
export type { WorkerView } from "./engine/definitions/serving-workers.js";
export type { RunInfo, StepView, WaitView, HoldView, EventView, EventStreamPage } from "./engine/runs/views.js";
export type { Explanation } from "./engine/runs/why.js";
export type { WayOut, WayOutVerb } from "./engine/runs/ways-out.js";
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "./engine/runs/listing.js";
export type { RunListFilter, RunListQuery, RunListPage, RunActivityView, RunSortKey, SortOrder } from "./engine/runs/listing.js";
export type { ExecutionOutcome } from "./engine/execution/index.js";
export { HOLD_CHOICES } from "./engine/runs/holds.js";
export type { ReleaseChoice } from "./engine/runs/holds.js";
export type { ReleaseOptions, Decision } from "./engine/control/index.js";
export type { DecisionResult, SignalResult, PauseResult, CancelResult, ResumeResult, RetryResult, ForkResult, StartByNameResult } from "./engine/control/index.js";
export type { ControlOptions } from "./engine/control/options.js";
export type { Replayable } from "./engine/control/idempotency.js";
export { agent, LOOP_VERSION } from "./agent/definition.js";
export type { AgentConfig, AgentDefinition, AgentInput, AgentOutput, AgentInitContext } from "./agent/definition-types.js";
export { tool } from "./agent/tool.js";
export { scriptedModel, lastUserText, toolResults, modelTurns } from "./agent/scripted-model.js";
export type { ScriptedModelOptions, ScriptedTurn, ScriptedToolCall, PromptToolResult } from "./agent/scripted-model.js";
export type { ToolOptions, ToolDefinition, ToolContext, ToolCallInfo } from "./agent/tool.js";
export type { ToolApprovalRequest, ToolDecision } from "./agent/approvals.js";
// Load-bearing for users' types: this module declares the tool fields (`input`, `scope`) into
// `Decision`; without a reference to it from here, `approve(…, { input })` fails to type-check.
export type { ToolDecisionOptions } from "./agent/tool-decisions.js";
export { may, actionsOf, ROLES, ACTIONS } from "./engine/access/index.js";
export type { Role, Action, Tokens, TokenInfo, CreatedToken, TokenCheck, TokenRefusal } from "./engine/access/index.js";
export { Session } from "./engine/sessions/session.js";
export type { SessionView, TurnOutcome } from "./engine/sessions/session.js";
export { Worker } from "./worker/worker.js";
export type { Checkpoint, RestoreHook } from "./worker/restore-gate.js";
export type { WorkspaceOptions } from "./engine/runs/workspace.js";
export { checkWorkspace } from "./workspace/workspace-path.js";
export { gcWorkspaces, restoreSnapshot, diffSnapshots } from "./workspace/lazy.js";
export type { GcOptions, GcResult, ScanOptions, SettleOptions, WorkspacePolicy } from "./workspace/index.js";
export type { WorkerOptions } from "./worker/worker.js";
export { SteadError, StepFailedError, isSteadError, ERROR_CODES } from "./errors.js";
export type { SteadErrorCode, ErrorCodeInfo } from "./errors.js";
export { openStore, SqliteStore, openSqliteStore, DEFAULT_SQLITE_PATH, TERMINAL_STATUSES, PostgresStore, openPostgresStore } from "./store/index.js";
export type { SqliteStoreOptions, PostgresStoreOptions } from "./store/index.js";
// The store's shapes a user names: the interface to pass as `store`, and the kinds and statuses
// the views report. The write protocol (mutations, units, claims, leases, transfer rows) is not
// public: it is the store's contract with the engine, free to change with either.
export type { Store, RunStatus, RunDamage, StepKind, StepStatus, WaitKind, WaitStatus, HoldKind, HoldStatus } from "./store/index.js";
export { exportStore, importStore, verifyStores } from "./store/transfer/lazy.js";
export type { ExportOptions, ExportSummary, ImportOptions, ImportSummary, StoreComparison } from "./store/transfer/index.js";
