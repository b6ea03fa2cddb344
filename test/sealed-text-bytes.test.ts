/**
 * A sealed text kept as its bytes (SQLite's journal) spells back exactly the text it was, opens
 * with its key, and is a quarter smaller; text that is not sealed, or whose base64 would not spell
 * back the same, is refused (kept as text by the store).
 */
import { describe, expect, it } from "vitest";
import { newKey, openText, sealedTextBytes, sealedTextOfBytes, sealText } from "../src/store/encryption/cipher.js";

const dk = { id: "dk-1", key: newKey() };
const keys = new Map([[dk.id, dk.key]]);
const AAD = "steps|run-1/3|output";

describe("a sealed text kept as bytes", () => {
  it("spells back the same text, which opens with its key, in about three quarters of its length", () => {
    for (const plain of ["", "{}", JSON.stringify({ body: "lorem ipsum ".repeat(90) }), "é✓ 𝄞"]) {
      const sealed = sealText(dk, plain, AAD);
      const bytes = sealedTextBytes(sealed);
      expect(bytes).not.toBeNull();
      expect(bytes!.byteLength).toBeLessThan(sealed.length * 0.8 + 4);
      const back = sealedTextOfBytes(bytes!);
      expect(back).toBe(sealed);
      expect(openText(keys, back!, AAD)).toBe(plain);
    }
  });

  it("refuses text that is not sealed, or whose base64 would decode to other bytes", () => {
    const sealed = sealText(dk, "{}", AAD);
    expect(sealedTextBytes('{"a":1}')).toBeNull();
    expect(sealedTextBytes("$stead1:no-colon-after-the-id")).toBeNull();
    expect(sealedTextBytes(`${sealed}=`)).toBeNull();
    expect(sealedTextBytes(`${sealed}+`)).toBeNull();
    expect(sealedTextBytes(`$stead1:${"k".repeat(256)}:AAAA`)).toBeNull();
    // A last character with bits past the data's end: decoding drops them, so it would not spell back.
    const body = sealed.slice(sealed.lastIndexOf(":") + 1);
    if (body.length % 4 !== 0) {
      const last = body.at(-1)!;
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
      const stray = alphabet[(alphabet.indexOf(last) + 1) % 64]!;
      expect(sealedTextBytes(sealed.slice(0, -1) + stray)).toBeNull();
    }
  });

  it("reads bytes of another kind as nothing, never as a sealed text", () => {
    expect(sealedTextOfBytes(Buffer.from("plain"))).toBeNull();
    expect(sealedTextOfBytes(Buffer.of(0xe6))).toBeNull();
    expect(sealedTextOfBytes(Buffer.of(0xe6, 9, 1, 2))).toBeNull();
    expect(sealedTextOfBytes(Buffer.of(0xe5, 1, 0x41, 1, 2, 3))).toBeNull();
  });
});
