/**
 * Every value sealed gets an IV of its own: GCM under one key with a repeated IV gives away the
 * XOR of two plain texts and lets the key's authentication be forged. IVs are drawn from the
 * CSPRNG a pool at a time (cipher.ts), so this seals more values than one pool holds, under two
 * keys taking turns, as texts and as bytes, and reads each IV from what would be stored.
 */
import { describe, expect, it } from "vitest";
import { newKey, openBytes, openText, sealBytes, sealedTextBytes, sealText } from "../src/store/encryption/cipher.js";

const keys = [
  { id: "dk-a", key: newKey() },
  { id: "dk-b", key: newKey() },
];
const keyring = new Map(keys.map((k) => [k.id, k.key]));
const IV_BYTES = 12;

/** The IV of a sealed text, read from its bytes (magic, id length, id, then the IV). */
function ivOfText(sealed: string): string {
  const bytes = sealedTextBytes(sealed);
  if (!bytes) throw new Error(`not a sealed text: ${sealed.slice(0, 40)}`);
  const start = 2 + (bytes[1] ?? 0);
  return bytes.subarray(start, start + IV_BYTES).toString("hex");
}

function ivOfBytes(sealed: Buffer): string {
  const start = 2 + (sealed[1] ?? 0);
  return sealed.subarray(start, start + IV_BYTES).toString("hex");
}

describe("sealing", () => {
  it("gives each value its own IV, across refills of the IV pool and keys taking turns, and every value opens", () => {
    const ivs: string[] = [];
    for (let i = 0; i < 2500; i++) {
      const dk = keys[i % 2]!;
      const aad = `steps|run-${i}|${i}|output`;
      if (i % 3 === 0) {
        const plain = Buffer.from(`blob ${i}`);
        const sealed = sealBytes(dk, plain, aad);
        ivs.push(ivOfBytes(sealed));
        expect(openBytes(keyring, sealed, aad).toString()).toBe(`blob ${i}`);
      } else {
        const sealed = sealText(dk, JSON.stringify({ i }), aad);
        ivs.push(ivOfText(sealed));
        expect(openText(keyring, sealed, aad)).toBe(JSON.stringify({ i }));
      }
    }
    expect(new Set(ivs).size).toBe(ivs.length);
  });

  it("seals one plain text twice as two different ciphertexts", () => {
    const dk = keys[0]!;
    const a = sealText(dk, "same", "runs|r|input");
    const b = sealText(dk, "same", "runs|r|input");
    expect(a).not.toBe(b);
    expect(ivOfText(a)).not.toBe(ivOfText(b));
  });
});
