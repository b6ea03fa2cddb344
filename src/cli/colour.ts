/**
 * Colour for people at a terminal. On only when the stream written to is a TTY and NO_COLOR
 * (https://no-color.org) is unset or empty: pipes, files and scripts always get plain text.
 */

type Style = "red" | "green" | "yellow" | "magenta" | "cyan" | "grey" | "boldRed";

const SGR: Record<Style, string> = { red: "31", green: "32", yellow: "33", magenta: "35", cyan: "36", grey: "90", boldRed: "1;31" };

export function colourOn(stream: { isTTY?: boolean } = process.stdout): boolean {
  const no = process.env.NO_COLOR;
  return (no === undefined || no === "") && stream.isTTY === true;
}

export function paint(text: string, style: Style | undefined, stream: { isTTY?: boolean } = process.stdout): string {
  return style && text && colourOn(stream) ? `\x1b[${SGR[style]}m${text}\x1b[0m` : text;
}

// eslint-disable-next-line no-control-regex
const SGR_SEQUENCE = /\x1b\[[0-9;]*m/g;

/** Length as a terminal shows it (colour sequences take no columns). */
export function visibleLength(s: string): number {
  return s.replace(SGR_SEQUENCE, "").length;
}

/** Run, step and turn statuses. */
const STATUS: Record<string, Style> = {
  completed: "green",
  failed: "red",
  cancelled: "grey",
  waiting: "yellow",
  held: "magenta",
  paused: "cyan",
  running: "cyan",
  intent: "yellow",
  retry: "yellow",
  interrupted: "yellow",
};

/** A status word in its colour ("completed" green, "failed" red, "held" magenta, …). */
export function statusColour(status: string): string {
  return paint(status, STATUS[status]);
}

/** A paragraph about a run in its status's colour. */
export function inStatusColour(status: string, text: string): string {
  return paint(text, STATUS[status]);
}

const EVENT: Record<string, Style> = {
  "run.completed": "green",
  "step.completed": "green",
  "run.failed": "red",
  "step.failed": "red",
  "run.held": "magenta",
  "wait.opened": "yellow",
  "run.waiting": "yellow",
  "step.intent": "yellow",
  "run.paused": "cyan",
  "run.cancelled": "grey",
};

/** An event type (already padded to its column) in the colour of what it reports. */
export function eventColour(type: string, padded = type): string {
  return paint(padded, EVENT[type]);
}

/** The "stead:" that starts an error line on standard error. */
export function errorPrefix(): string {
  return paint("stead:", "boldRed", process.stderr);
}
