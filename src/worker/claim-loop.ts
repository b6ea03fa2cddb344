/**
 * When the worker's tick (sweep, then claim) runs: every `pollMs` while idle, at once on a kick.
 * Never two ticks at once: a kick during a tick is remembered, and the next tick follows it at
 * once. A kick that found the tick's end without presence stays remembered until the next tick.
 */
export class ClaimLoop {
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private kicked = false;
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly tick: () => Promise<void>,
    private readonly pollMs: number,
    /** Whether the worker's lifecycle lets it claim. */
    private readonly claims: () => boolean,
    /** Whether the worker's presence in a shared store is registered (always, with a private store). */
    private readonly present: () => boolean,
  ) {}

  /** The tick in progress (or the last one): stop() waits for it, so no claim lands after the worker has stopped. */
  get settled(): Promise<void> {
    return this.last;
  }

  /** Ticks again soon: a run of ours finished and may have woken its parent, or an answer arrived. */
  kick(): void {
    if (!this.claims() || !this.present()) return;
    if (this.ticking) {
      this.kicked = true;
      return;
    }
    clearTimeout(this.timer);
    this.schedule(0);
  }

  /** No tick is scheduled any more (one in progress still finishes: see `settled`). */
  cancel(): void {
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.last = this.run();
    }, ms);
  }

  private async run(): Promise<void> {
    if (!this.claims()) return;
    this.ticking = true;
    try {
      await this.tick();
    } finally {
      this.ticking = false;
    }
    // Without presence, the worker kicks once it is registered again.
    if (!this.claims() || !this.present()) return;
    if (this.kicked) {
      this.kicked = false;
      this.schedule(0);
    } else {
      this.schedule(this.pollMs);
    }
  }
}
