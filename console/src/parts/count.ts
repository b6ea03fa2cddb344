/** A count and its noun, singular for one ("1 step", "2 steps"): for nouns whose plural adds an s. */
export function counted(n: number, noun: string): string {
  return `${n.toLocaleString()} ${noun}${n === 1 ? "" : "s"}`;
}
