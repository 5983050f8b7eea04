// A finished hand, step by step (forwards, backwards, any step), the whole table at each,
// and the fairness panel: the deal re-derived in this browser from the revealed seeds.

import { api, h, seatName, tokens } from "./api.js";
import { cardFace } from "./cards.js";
import { checkHand } from "./fairness.js";
import { checkReceipts } from "./receipts.js";

const gameId = location.pathname.split("/")[2];
const hand = Number(new URLSearchParams(location.search).get("hand") || "1");
const held = tokens.seat(gameId);
const state = { replay: null, at: 0 };

function cards(list, state) {
  return h("div", { class: "hand" }, list.map((card) => h("span", { class: "slot" }, cardFace(card, state))));
}

function gridTable(table, seats) {
  return h("div", { class: "table" },
    h("div", { class: "centre" },
      h("div", { class: "pile" }, h("span", { class: "slot" }, cardFace(null)), h("small", { class: "stock-count" }, `stock: ${(table.stock || []).length}`)),
      table.centre ? h("div", { class: "pile" }, h("span", { class: "slot" }, cardFace(table.centre)), h("small", {}, "centre card")) : "",
      table.drawn ? h("div", { class: "pile" }, h("span", { class: "slot" }, cardFace(table.drawn, "in hand")), h("small", {}, `in hand of seat ${table.to_play + 1}`)) : ""),
    h("div", { class: "seats" }, table.layouts.map((rows, seat) => {
      const grid = h("div", { class: "grid", role: "group", "aria-label": "layout" });
      grid.style.setProperty("--columns", String(rows[0].length));
      rows.forEach((row, r) => row.forEach((card, c) => {
        const up = table.face_up[seat]?.[r]?.[c];
        grid.append(h("span", { class: `slot${up ? "" : " down"}` }, cardFace(card, up ? "face up" : "face down")));
      }));
      const pile = table.discard_piles[table.discard_piles.length === 1 ? 0 : seat] || [];
      return h("section", { class: "seat", "aria-label": `seat ${seat + 1}` },
        h("h3", {}, h("span", { class: "name" }, seatName(seats[seat]))), grid,
        table.discard_piles.length > 1 || seat === 0 ? h("p", {}, `discard pile${table.discard_piles.length === 1 ? " (shared)" : ""}: `, pile.length ? cards(pile.slice(-3), "face up") : "empty") : "");
    })));
}

function sheddingTable(table, seats) {
  return h("div", { class: "table" },
    h("div", { class: "centre" }, h("p", {}, `pile: ${table.pile.length}`), table.pile.length ? cards(table.pile.slice(-4), "face up") : ""),
    h("div", { class: "seats" }, table.players.map((player) => h("section", { class: "seat", "aria-label": `seat ${player.seat + 1}` },
      h("h3", {}, h("span", { class: "name" }, seatName(seats[player.seat]))),
      h("p", {}, "stacks, face up:"), cards(player.face_up.filter(Boolean), "face up"),
      h("p", {}, "stacks, face down:"), h("div", { class: "hand" }, player.face_down.filter(Boolean).map((card) => h("span", { class: "slot down" }, cardFace(card, "face down")))),
      h("p", {}, "hand:"), cards(player.hand, "in hand")))));
}

function show(at) {
  const { replay } = state;
  state.at = Math.max(0, Math.min(at, replay.steps.length - 1));
  const step = replay.steps[state.at];
  document.getElementById("step").value = String(state.at);
  document.getElementById("where").textContent = `step ${state.at + 1} of ${replay.steps.length} (version ${step.version}): ${step.event.type}`;
  const table = step.table.family === "grid" ? gridTable(step.table, replay.seats) : sheddingTable(step.table, replay.seats);
  document.getElementById("table").replaceChildren(table);
  document.body.dataset.step = String(state.at);
}

async function allEvents() {
  const entries = [];
  let after = 0;
  while (after !== null) {
    const page = await api("GET", `/games/${gameId}/events?after=${after}&limit=1000`, { token: held?.token });
    entries.push(...page.events);
    after = page.next_after;
  }
  return entries;
}

async function fairness(replay) {
  const list = document.getElementById("checks");
  try {
    const [events, seen, summary] = await Promise.all([
      allEvents(),
      api("GET", `/games/${gameId}/view`),
      api("GET", `/games/${gameId}`),
    ]);
    const rules = replay.variant === "tens-shedding"
      ? { grab_min: summary.options.grab_min ?? 16, grab_max: summary.options.grab_max ?? 22 }
      : seen.view.rules;
    const hashes = Object.fromEntries(events.map((e) => [e.version, e.hash ?? null]));
    const checks = [...(await checkHand(events, replay, rules)), ...(await checkReceipts(gameId, hashes))];
    list.replaceChildren(...checks.map((c) => h("li", { class: c.ok ? "pass" : "fail" },
      h("strong", {}, c.ok ? "\u2713 passed: " : "\u2717 failed: "), c.name, h("br"), h("small", {}, c.detail))));
    document.body.dataset.fairness = checks.every((c) => c.ok) ? "passed" : "failed";
  } catch (error) {
    list.replaceChildren(h("li", { class: "fail" }, `Could not check: ${error.message}`));
    document.body.dataset.fairness = "failed";
  }
}

async function start() {
  const replay = await api("GET", `/games/${gameId}/hands/${hand}/replay`, { token: held?.token });
  state.replay = replay;
  const scores = await api("GET", `/games/${gameId}/scores`, { token: held?.token });
  document.getElementById("title").textContent = `${replay.variant}: hand ${hand}`;
  document.getElementById("hands").replaceChildren(...scores.hands.map((row) => h("a", {
    class: "action", href: `/replay/${gameId}?hand=${row.hand}`, "aria-current": row.hand === hand ? "page" : null,
  }, `hand ${row.hand}`)), h("a", { class: "action", href: `/watch/${gameId}` }, "the table"),
    h("a", { class: "action", href: `/verify?game=${gameId}` }, "verify the whole game"));
  const slider = document.getElementById("step");
  slider.max = String(replay.steps.length - 1);
  slider.addEventListener("input", () => show(Number(slider.value)));
  const moves = { first: () => 0, back: () => state.at - 1, forward: () => state.at + 1, last: () => replay.steps.length - 1 };
  for (const [id, to] of Object.entries(moves)) document.getElementById(id).addEventListener("click", () => show(to()));
  document.addEventListener("keydown", (event) => {
    if (event.target === slider) return;
    const keys = { ArrowLeft: moves.back, ArrowRight: moves.forward, Home: moves.first, End: moves.last };
    if (keys[event.key]) show(keys[event.key]());
  });
  show(0);
  document.body.dataset.ready = "yes";
  await fairness(replay);
}

start().catch((error) => {
  document.getElementById("where").textContent = `Could not load the replay: ${error.message}`;
});
