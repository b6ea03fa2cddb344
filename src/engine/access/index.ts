/**
 * Who may do what: access tokens (tokens.ts, their secrets in token-secret.ts) and roles with the
 * one table of their permissions (roles.ts). The CLI and the server take both from here.
 */
export { ACTIONS, ROLES, actionsOf, checkRole, isAction, isRole, may, requirePermission, type Action, type Role } from "./roles.js";
export { TOKEN_TOUCH_INTERVAL_MS, Tokens, checkTokenName, tokenRefused, type CreatedToken, type TokenCheck, type TokenInfo, type TokenRefusal } from "./tokens.js";
