/** Whether the store has room to write, asked while runs are held `storage` (a full disk, a size limit). */
import type { StorageCheck } from "../faults.js";

export interface StorageRoom {
  /**
   * Whether a write of `needBytes` should succeed now (a full disk, a size limit). Asked by workers
   * while runs are held `storage`; a store that cannot tell without writing probes with a write it
   * rolls back.
   */
  checkStorage(needBytes: number): Promise<StorageCheck>;
}

/** Room a store keeps aside for a full store's bookkeeping. Optional in `Store`. */
export interface StorageReserve {
  /**
   * Frees room the store keeps aside for a full store's bookkeeping (the `storage` holds that tell
   * people why runs stopped); false when there was none to free.
   */
  releaseReserve(): Promise<boolean>;
  /** Puts that room aside if it is missing and fits (a no-op when it is in place or cannot fit). */
  restoreReserve(): Promise<void>;
}
