/**
 * Reads only people ask for (why a run is where it is, a session's transcript), loaded on first
 * use so a worker process does not compile them at start-up (W3 in bench/).
 */
export type Why = typeof import("../engine/runs/why.js");
export type Transcripts = typeof import("../agent/session-transcript.js");

let why: Promise<Why> | undefined;
let transcripts: Promise<Transcripts> | undefined;

export const whyModule = (): Promise<Why> => (why ??= import("../engine/runs/why.js"));
export const transcriptModule = (): Promise<Transcripts> => (transcripts ??= import("../agent/session-transcript.js"));
