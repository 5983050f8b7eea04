// docs/SHUFFLE.md in the browser, written from the document alone (Web Crypto SHA-256 and
// HMAC): the word stream, a uniform integer below n, the unshuffled deck, Fisher-Yates, the
// v2 hand seed and the seed chain. The fairness panel re-derives every deal with it.

const TAG = new TextEncoder().encode("fairway/hand-seed/v2");
const SUITS = ["S", "H", "D", "C"];
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
const TWO_64 = 1n << 64n;

export function hex(bytes) {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function unhex(text) {
  if (!/^([0-9a-f]{2})*$/.test(text)) throw new Error(`not hex: ${text}`);
  return Uint8Array.from(text.match(/../g) || [], (pair) => parseInt(pair, 16));
}

export async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

export async function hmacSha256(key, message) {
  const imported = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, message));
}

// Section 1 and 2: word(k) = the first 8 bytes of SHA-256(seed || u64(k)), big-endian.
export class WordStream {
  constructor(seed, position = 0) {
    this.seed = seed;
    this.position = position;
  }

  async word() {
    const message = new Uint8Array(this.seed.length + 8);
    message.set(this.seed);
    new DataView(message.buffer).setBigUint64(this.seed.length, BigInt(this.position));
    this.position += 1;
    const digest = await sha256(message);
    return new DataView(digest.buffer).getBigUint64(0);
  }

  async below(n) {
    const size = BigInt(n);
    const limit = (TWO_64 / size) * size;
    for (;;) {
      const word = await this.word();
      if (word < limit) return Number(word % size);
    }
  }

  // Section 4: Fisher-Yates from the last position down; position 0 is the top.
  async shuffled(cards) {
    const deck = [...cards];
    for (let i = deck.length - 1; i >= 1; i -= 1) {
      const j = await this.below(i + 1);
      [deck[i], deck[j]] = [deck[j], deck[i]];
    }
    return deck;
  }
}

// Section 3: each deck spades, hearts, diamonds, clubs, A..K; jokers after all the decks.
export function unshuffled(decks, jokers = 0) {
  const cards = [];
  for (let d = 0; d < decks; d += 1) {
    for (const suit of SUITS) for (const rank of RANKS) cards.push(rank + suit);
  }
  for (let j = 0; j < jokers; j += 1) cards.push("JK");
  return cards;
}

function u32(n) {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, n);
  return bytes;
}

// Section 8: the message HMAC'd under the hand's server seed.
export function handMessage(hand, seatSeeds) {
  const parts = [u32(TAG.length), TAG];
  const nonce = new Uint8Array(8);
  new DataView(nonce.buffer).setBigUint64(0, BigInt(hand));
  parts.push(nonce, u32(seatSeeds.length));
  for (const seed of seatSeeds) {
    const bytes = new TextEncoder().encode(seed);
    parts.push(u32(bytes.length), bytes);
  }
  const message = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    message.set(part, at);
    at += part.length;
  }
  return message;
}

export async function handSeed(serverSeed, hand, seatSeeds) {
  return hmacSha256(serverSeed, handMessage(hand, seatSeeds));
}

// Section 9: SHA-256 applied `times` times.
export async function hashedTimes(bytes, times) {
  let value = bytes;
  for (let i = 0; i < times; i += 1) value = await sha256(value);
  return value;
}
