import type { Owner, WorkerAttachment, WorkerPresence } from "../store/types.js";
import { newOwner } from "./owner.js";

export interface PresenceOptions {
  /** Whether the worker's lifecycle lets it claim: attaching stops, and a late attachment is let go, once it does not. */
  claims: () => boolean;
  /** A run may have become claimable (the store's wake-up), or presence was just registered. */
  kick: () => void;
  /** Presence was lost while claiming: runs of the old identity may be taken over now. Called before the identity changes. */
  lost: () => void;
  onError: (e: unknown) => void;
}

/**
 * A worker's identity in leases, and its presence in a store shared by many hosts
 * (store/ports/worker-presence.ts). Not a lifecycle state (worker-state.ts): presence comes and
 * goes while running and only says whether a claim may be made now. A private store has no
 * presence to register: always present.
 */
export class Presence {
  private attachment: WorkerAttachment | undefined;
  private ownerNow: Owner = newOwner();

  constructor(
    private readonly store: Partial<Pick<WorkerPresence, "attachWorker">>,
    private readonly options: PresenceOptions,
  ) {}

  /**
   * This worker's identity in leases. It changes when the worker loses its presence in a shared
   * store (its liveness connection dropped): runs of the old identity may be taken over at once.
   */
  get owner(): Owner {
    return this.ownerNow;
  }

  /** Whether the store is shared (presence must be registered before any claim). */
  get shared(): boolean {
    return this.store.attachWorker !== undefined;
  }

  /** Whether this worker may claim: always with a private store; with a shared one, only while its presence is registered. */
  get present(): boolean {
    return !this.store.attachWorker || this.attachment !== undefined;
  }

  /**
   * Registers presence in a shared store before any claim, with bounded backoff while the store
   * is unreachable. When presence is lost, every run of this identity may be taken over at once,
   * so their executions end now, and the worker comes back under a new identity.
   */
  async attach(): Promise<void> {
    for (let attempt = 0; this.options.claims(); attempt++) {
      try {
        const a = await this.store.attachWorker?.(this.ownerNow.workerId, () => this.options.kick());
        if (!a) return;
        if (!this.options.claims()) {
          await a.detach();
          return;
        }
        this.attachment = a;
        void a.lost.then(() => this.onLost(a));
        this.options.kick();
        return;
      } catch (e) {
        this.options.onError(e);
        await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** attempt)));
      }
    }
  }

  private onLost(a: WorkerAttachment): void {
    if (this.attachment !== a || !this.options.claims()) return;
    this.attachment = undefined;
    this.options.lost();
    this.ownerNow = newOwner();
    void this.attach();
  }

  /** Ends the presence (the worker stopped or failed). */
  detach(): Promise<void> {
    const a = this.attachment;
    this.attachment = undefined;
    return a ? a.detach() : Promise.resolve();
  }
}
