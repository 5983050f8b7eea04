// An exported game (`GET /games/{id}/export`, format fairway-game-export/1) verified whole in
// the browser: the hash chain of every stored event (docs/EVENT_STORE.md), the header
// against the events, each hand's seeds against the committed chain, every card drawn
// from the stock against the deck its seed shuffles, and (Tens-shedding) every card a
// round's events show against the deal its seed makes. Each failure names where it is.

import { derive } from "./fairness.js";
import { sheddingPlays } from "./sheddingcheck.js";
import { hashedTimes, handSeed, hex, sha256, unhex } from "./shuffle.js";

const utf8 = new TextEncoder();

function result(name, failures, passed) {
  return { name, ok: failures.length === 0, detail: failures.length ? failures.slice(0, 3).join("; ") : passed };
}

async function chained(doc) {
  const failures = [];
  let previous = new Uint8Array(32);
  doc.events.forEach((event, i) => {
    if (event.version !== i + 1) failures.push(`event ${i + 1}: version ${event.version}`);
  });
  for (const event of doc.events) {
    if (event.prev_hash !== hex(previous)) failures.push(`version ${event.version}: prev_hash is not the previous link`);
    const canonical = `["game:${doc.game_id}",${event.version},"${event.event_id}","${event.type}",${event.schema_version},${event.data},${event.metadata}]`;
    const bytes = utf8.encode(canonical);
    const message = new Uint8Array(32 + bytes.length);
    message.set(previous);
    message.set(bytes, 32);
    previous = await sha256(message);
    if (hex(previous) !== event.hash) failures.push(`version ${event.version}: hash differs (the event's text was changed)`);
  }
  const header = [];
  if (doc.event_count !== doc.events.length) header.push(`event_count ${doc.event_count}, ${doc.events.length} events`);
  if (doc.head_hash !== hex(previous)) header.push("head_hash is not the last link");
  return [result("the hash chain of every event", failures, `${doc.events.length} links from the genesis hash`),
    result("the header against the events", header, "event_count and head_hash")];
}

async function hands(doc, events) {
  const created = events.find((e) => e.type === "game.created")?.data;
  const failures = [];
  const draws = [];
  const shed = { failures: [], shown: 0 };
  const seats = doc.seats.length;
  const dealt = events.filter((e) => e.type === "hand.dealt");
  for (const { version, data } of dealt) {
    const at = `version ${version} (hand ${data.hand})`;
    const previous = dealt.find((e) => e.data.hand === data.hand - 1)?.data;
    const extension = events.find((e) => e.type === "seed_chain.extended" && e.data.first_hand === data.hand)?.data;
    const link = extension ? extension.anchor : data.hand === 1 ? created?.seed_anchor : previous?.server_seed;
    if (data.shuffle === "hmac-seat-seeds-v2") {
      if (data.commitment !== link) failures.push(`${at}: data.commitment is not the chain's link`);
      if (hex(await sha256(unhex(data.server_seed))) !== data.commitment) failures.push(`${at}: SHA-256(data.server_seed) is not the commitment`);
      if (hex(await handSeed(unhex(data.server_seed), data.nonce || data.hand, data.seat_seeds)) !== data.seed) failures.push(`${at}: data.seed is not the HMAC of the seeds`);
    } else if (hex(await sha256(unhex(data.seed))) !== data.commitment) {
      failures.push(`${at}: SHA-256(data.seed) is not the commitment`);
    }
    const exported = doc.seeds.find((s) => s.hand === data.hand);
    if (!exported || exported.commitment !== data.commitment) failures.push(`seeds[hand ${data.hand}]: the header's commitment differs from ${at}`);
    if (doc.rules.family === "grid") draws.push(await drawsOf(doc, events, version, data, seats));
    if (doc.rules.family === "shedding") await roundOf(doc, events, version, data, seats, shed);
  }
  if (created?.seed_secret && created.seed_hands) {
    if (hex(await hashedTimes(unhex(created.seed_secret), created.seed_hands)) !== created.seed_anchor) failures.push("version 1: data.seed_secret does not hash to data.seed_anchor");
  }
  const checked = [result("each hand's seeds against the committed chain", failures, `${dealt.length} hand(s)`)];
  if (draws.length) checked.push(result("every card drawn from the stock", draws.flat(), `${dealt.length} hand(s), every draw before a rebuilt stock`));
  if (doc.rules.family === "shedding") {
    checked.push(result("every card dealt, played and picked up (Tens-shedding)", shed.failures,
      `${dealt.length} round(s): each of the ${shed.shown} cards the events name where its round's deal put it`));
  }
  return checked;
}

async function drawsOf(doc, events, from, data, seats) {
  const derived = await derive(unhex(data.seed), data.hand, data.dealer, seats, doc.variant, doc.rules);
  let next = 0;
  for (const { version, type, data: event } of events.filter((e) => e.version > from)) {
    if (type === "hand.dealt" || type === "stock.reshuffled") break;
    if (type === "card.drawn" && event.source === "stock") {
      if (event.card !== derived.stock[next]) return [`version ${version}: data.card is ${event.card}, the deck says ${derived.stock[next]}`];
      next += 1;
    }
  }
  return [];
}

// A Tens-shedding round: the dealer its seed draws (first round), then every card its
// events show against the 19 cards the deal gave each seat.
async function roundOf(doc, events, from, data, seats, shed) {
  const derived = await derive(unhex(data.seed), data.hand, data.dealer, seats, doc.variant, doc.rules);
  if (derived.dealer !== data.dealer) {
    shed.failures.push(`version ${from}: hand ${data.hand}: data.dealer is seat ${data.dealer + 1}, the seed says seat ${derived.dealer + 1}`);
  }
  const after = events.filter((e) => e.version > from).map((e) => ({ where: `version ${e.version}`, type: e.type, data: e.data }));
  const found = sheddingPlays(data.hand, derived, after);
  shed.failures.push(...found.failures);
  shed.shown += found.shown;
}

export async function checkExport(doc) {
  if (doc.format !== "fairway-game-export/1") return [{ name: "the format", ok: false, detail: `format ${doc.format}` }];
  const checks = await chained(doc);
  const events = [];
  for (const event of doc.events) {
    try {
      events.push({ version: event.version, type: event.type, data: JSON.parse(event.data) });
    } catch {
      checks.push({ name: "every event's data", ok: false, detail: `version ${event.version}: data is not JSON` });
      return checks;
    }
  }
  return [...checks, ...(await hands(doc, events))];
}
