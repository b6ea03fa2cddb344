/**
 * The control commands, loaded on first use: a worker process never answers, forks or revives a
 * run, so it does not pay for compiling them at start-up (W3 in bench/). The module is the one a
 * static import would load, so its classes and errors are the same.
 */
export type Control = typeof import("./index.js");

let loading: Promise<Control> | undefined;

export const control = (): Promise<Control> => (loading ??= import("./index.js"));
