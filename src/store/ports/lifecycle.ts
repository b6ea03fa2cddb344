/** Opening, upgrading and closing a store: what every other port assumes has happened. */

export interface StoreInfo {
  dialect: string;
  location: string;
  schemaVersion: number;
}

export interface StoreLifecycle {
  readonly dialect: string;
  /** Human-readable location (a file path or a redacted URL). */
  readonly location: string;
  /** Applies pending migrations; refuses a store of a newer schema or one that is not a Stead store. */
  migrate(): Promise<void>;
  /** Checks the store is a Stead store of a version this code reads, without changing it. */
  check(): Promise<StoreInfo>;
  close(): Promise<void>;
}
