// The receipts this browser kept for its own seats (every answer that stored events carries
// one), and their check: each signature by Ed25519 (Web Crypto) under the key its key_id
// names at /.well-known/fairway-receipt-key, and each hash against the game's chain.

import { api } from "./api.js";
import { unhex } from "./shuffle.js";

const KEY = "fairway.receipts";
const KEEP = 100; // the audit takes 100 at most; the newest are kept

function all() {
  try {
    return JSON.parse(localStorage.getItem(KEY) || "{}") || {};
  } catch {
    return {};
  }
}

export function keepReceipt(receipt) {
  if (!receipt) return;
  const kept = all();
  const list = (kept[receipt.game_id] || []).filter((r) => r.version !== receipt.version);
  list.push(receipt);
  kept[receipt.game_id] = list.slice(-KEEP);
  localStorage.setItem(KEY, JSON.stringify(kept));
}

export function receiptsOf(gameId) {
  return all()[gameId] || [];
}

function base64url(text) {
  const plain = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4));
  return Uint8Array.from(plain, (c) => c.charCodeAt(0));
}

// "fairway-receipt-v1" 0x00 || u32(len(game_id)) || game_id || u64(version) || hash (32 bytes)
function signedBytes(receipt) {
  const tag = new TextEncoder().encode("fairway-receipt-v1\u0000");
  const id = new TextEncoder().encode(receipt.game_id);
  const bytes = new Uint8Array(tag.length + 4 + id.length + 8 + 32);
  const view = new DataView(bytes.buffer);
  bytes.set(tag);
  view.setUint32(tag.length, id.length);
  bytes.set(id, tag.length + 4);
  view.setBigUint64(tag.length + 4 + id.length, BigInt(receipt.version));
  bytes.set(unhex(receipt.hash), tag.length + 12 + id.length);
  return bytes;
}

// `hashes`: the chain's link at each version, as the game's feed gives them.
export async function checkReceipts(gameId, hashes) {
  const kept = receiptsOf(gameId);
  if (!kept.length) return [];
  const published = await api("GET", "/.well-known/fairway-receipt-key");
  const keys = new Map([...published.keys, { key_id: published.key_id, public_key: published.public_key }].map((k) => [k.key_id, k.public_key]));
  const failures = [];
  for (const receipt of kept) {
    const where = `the receipt of version ${receipt.version}`;
    const key = keys.get(receipt.key_id);
    if (!key) {
      failures.push(`${where}: no published key ${receipt.key_id}`);
      continue;
    }
    const imported = await crypto.subtle.importKey("raw", base64url(key), { name: "Ed25519" }, false, ["verify"]);
    if (!(await crypto.subtle.verify({ name: "Ed25519" }, imported, base64url(receipt.signature), signedBytes(receipt)))) {
      failures.push(`${where}: the signature does not hold`);
    } else if (!(receipt.version in hashes)) {
      failures.push(`${where}: the game's history has no such version`);
    } else if (hashes[receipt.version] !== null && hashes[receipt.version] !== receipt.hash) {
      failures.push(`${where}: the stored history's hash differs (rewritten)`);
    }
  }
  return [{
    name: "the receipts this browser kept for its seats",
    ok: failures.length === 0,
    detail: failures.length ? failures.slice(0, 3).join("; ") : `${kept.length} receipt(s): signed by a published key, each hash the chain's link`,
  }];
}

