/** Blob row mappers and snapshot checks, shared by every SQL store (snapshot rows map in `rows.ts`). */
import { SteadError } from "../errors.js";
import type { BlobInfo, BlobRow, Unit } from "./types.js";

type Raw = Record<string, unknown>;

export function toBlob(r: Raw): BlobRow {
  const data = r.data;
  return { hash: String(r.hash), size: Number(r.size), data: Buffer.isBuffer(data) ? data : Buffer.from(data as Uint8Array) };
}

export function toBlobInfo(r: Raw): BlobInfo {
  return { hash: String(r.hash), size: Number(r.size), stored: Number(r.stored) };
}

/**
 * Refuses snapshots on an optional mutation (whether it applied is not reported, so its snapshot
 * could describe a step that was never committed) and checks each snapshot's shape.
 */
export function checkSnapshotWrites(units: readonly Unit[]): void {
  for (const unit of units) {
    for (const m of unit) {
      if (!m.snapshots?.length) continue;
      if (m.optional) {
        throw new SteadError("STEAD_INVALID_MUTATION", `a snapshot of run ${m.runId} rides on an optional mutation`, {
          runId: m.runId,
          fix: "put snapshots on the mutation that commits the step's outcome (not optional)",
        });
      }
      for (const s of m.snapshots) {
        if (!Number.isSafeInteger(s.seq) || s.seq < -1 || !["start", "step", "settle"].includes(s.source) || typeof s.root !== "string" || s.root === "") {
          throw new SteadError("STEAD_INVALID_MUTATION", `run ${m.runId}: invalid snapshot (seq ${String(s.seq)}, source ${String(s.source)})`, {
            runId: m.runId,
            fix: "build snapshots with the workspace capture (src/workspace), not by hand",
          });
        }
      }
    }
  }
}
