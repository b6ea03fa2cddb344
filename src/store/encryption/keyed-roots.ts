/**
 * A snapshot's root as an encrypted store keeps it: not the root tree object's hash (a SHA-256 over
 * the names, modes, sizes, times and content hashes of the files, which confirms a guess of them)
 * but `keyed:` and that tree object's blob address, a keyed digest (keyring.ts). The address finds
 * the tree object; its content's hash, checked against the address, is the plain root again
 * (workspace/tree-loader.ts). A root without the prefix is a plain hash: a plain store's, or one
 * an encrypted store wrote before roots were keyed.
 */
const KEYED = "keyed:";

export const isKeyedRoot = (root: string): boolean => root.startsWith(KEYED);

/** The blob address a keyed root names. */
export const keyedRootAddress = (root: string): string => root.slice(KEYED.length);

export const keyedRoot = (address: string): string => `${KEYED}${address}`;
