// A table, live: /play/{id} for a seat this browser holds a token of, /watch/{id} for a
// spectator. The page follows the game's stream and, at each event, reads the viewer's own
// view again (`/me` for a seat, `/view` for a spectator): it shows only what that gave it.

import { api, follow, h, seatName, tokens } from "./api.js";
import { describe } from "./cards.js";
import { keepReceipt } from "./receipts.js";
import { gridButtons, renderGrid } from "./grid.js";
import { renderShedding, sheddingButtons } from "./shedding.js";

const [, mode, gameId] = location.pathname.split("/");
const held = mode === "play" ? tokens.seat(gameId) : null;
const root = document.getElementById("table");
const bar = document.getElementById("actions");
const info = document.getElementById("info");
const scores = document.getElementById("scores");
const notice = document.getElementById("notice");
const state = { summary: null, seen: null, queued: false, stream: null };

function say(text, kind = "info") {
  notice.textContent = text;
  notice.className = `notice ${kind}`;
}

async function read() {
  const [summary, seen] = await Promise.all([
    api("GET", `/games/${gameId}`, { token: held?.token }),
    held ? api("GET", `/games/${gameId}/me`, { token: held.token }) : api("GET", `/games/${gameId}/view`),
  ]);
  state.summary = summary;
  state.seen = seen;
}

// Reads and actions take turns (never two at once), so a click made while the page reads
// is posted after the read, at the version the page then shows; reads asked for meanwhile
// collapse into one.
let chain = Promise.resolve();
function exclusive(job) {
  const run = chain.then(job);
  chain = run.catch(() => {});
  return run;
}

function refresh() {
  if (state.queued) return chain;
  state.queued = true;
  return exclusive(async () => {
    state.queued = false;
    try {
      await read();
      render();
    } catch (error) {
      say(`Could not read the game: ${error.message}`, "error");
    }
  });
}

function act(action) {
  return exclusive(async () => {
    try {
      const answer = await api("POST", `/games/${gameId}/actions`, {
        token: held.token, body: action, headers: { "If-Match": `"${state.seen.version}"` },
      });
      keepReceipt(answer.receipt);
      state.seen = { ...state.seen, version: answer.version, view: answer.view, status: answer.status, legal_actions: answer.legal_actions };
      say(`You: ${describe(action)}.`);
      render();
    } catch (error) {
      say(`Refused: ${error.message}`, "error");
      await read();
      render();
    }
  });
}

async function lobbyCommand(path, token, done) {
  try {
    await api("POST", path, { token, body: {} });
    say(done);
  } catch (error) {
    say(`Refused: ${error.message}`, "error");
  }
  await refresh();
}

function deadlines(summary) {
  return Object.fromEntries(summary.seats.filter((s) => s.turn_deadline).map((s) => [s.seat, s.turn_deadline]));
}

function header(summary, seen) {
  const status = seen.status || summary.status;
  const names = summary.seats.map(seatName);
  const parts = [h("h1", {}, summary.title || `${summary.variant} game`),
    h("p", {}, `${summary.variant} \u00b7 ${summary.seats.length} seats \u00b7 `,
      held ? `you are seat ${held.seat + 1}` : "watching as a spectator",
      ` \u00b7 version ${seen.version}`)];
  if (!status) {
    parts.push(h("p", { class: "phase" }, "Waiting for every seat to be claimed and the game to start."));
  } else if (status.phase === "game_over") {
    const winners = (status.winners || []).map((s) => names[s]).join(", ");
    parts.push(h("p", { class: "phase over" }, `Game over. Winner: ${winners || "-"}`));
  } else {
    const acting = status.to_act.map((s) => names[s]).join(", ");
    parts.push(h("p", { class: "phase" }, `Hand ${status.hand} \u00b7 to act: `, h("strong", {}, acting || "-"),
      summary.turn_deadline ? h("span", { class: "clock", dataset: { deadline: summary.turn_deadline } }) : ""));
  }
  return parts;
}

function lobbyButtons(summary) {
  const buttons = [];
  const creator = tokens.creator(gameId);
  const free = summary.seats.filter((s) => !s.name && !s.bot);
  if (!summary.started && creator) {
    buttons.push(h("button", {
      type: "button", class: "action", disabled: free.length > 0,
      onclick: () => lobbyCommand(`/games/${gameId}/start`, creator, "Started."),
    }, free.length ? `start (waiting for ${free.length} seat(s))` : "start the game"));
  }
  const status = summary.status;
  if (held && status?.phase === "game_over" && !summary.rematch) {
    buttons.push(h("button", {
      type: "button", class: "action rematch", onclick: async () => {
        try {
          const made = await api("POST", `/games/${gameId}/rematch`, { token: held.token, body: {} });
          tokens.keepSeat(made.game_id, { ...held, game_id: made.game_id });
          location.assign(`/play/${made.game_id}`);
        } catch (error) {
          say(`Refused: ${error.message}`, "error");
        }
      },
    }, "rematch"));
  }
  if (summary.rematch) {
    // The rematch seats the same holders with the same tokens: this seat's token goes along.
    buttons.push(h("a", {
      href: `/${held ? "play" : "watch"}/${summary.rematch}`, class: "action rematch-link",
      onclick: () => held && tokens.keepSeat(summary.rematch, held),
    }, "to the rematch"));
  }
  return buttons;
}

async function showScores() {
  const status = state.seen.status;
  if (!status || status.hand < 1) return;
  try {
    const board = await api("GET", `/games/${gameId}/scores`, { token: held?.token });
    const names = state.summary.seats.map(seatName);
    scores.replaceChildren(h("h2", {}, "Scores"), h("table", {},
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "hand"), names.map((n) => h("th", { scope: "col" }, n)))),
      h("tbody", {}, board.hands.map((row) => h("tr", {}, h("th", { scope: "row" },
        h("a", { href: `/replay/${gameId}?hand=${row.hand}`, "aria-label": `replay of hand ${row.hand}` }, String(row.hand))),
        row.scores.map((s) => h("td", {}, String(s))))),
        h("tr", { class: "totals" }, h("th", { scope: "row" }, "total"), board.totals.map((t) => h("td", {}, String(t)))))));
  } catch {
    /* the scores can wait for the next event */
  }
}

let lastHand = -1;
// A re-render replaces the table's buttons: keep the keyboard's place, on the same action
// where it is still offered, else on the first thing offered now.
function keepFocus(draw) {
  const active = document.activeElement;
  const inside = active && (root.contains(active) || bar.contains(active));
  const action = inside ? active.dataset.action : undefined;
  draw();
  if (!inside) return;
  const same = action && [...document.querySelectorAll("[data-action]")].find((e) => e.dataset.action === action);
  (same || document.querySelector("button.legal:not([disabled])") || bar.querySelector("button, a"))?.focus();
}

function render() {
  keepFocus(draw);
}

function draw() {
  const { summary, seen } = state;
  info.replaceChildren(...header(summary, seen));
  const legal = held ? seen.legal_actions || [] : [];
  const view = seen.view;
  const seats = summary.seats;
  const clocks = deadlines(summary);
  const onPick = (action) => act(action);
  if (!view) root.replaceChildren(h("p", {}, "No cards dealt yet."));
  else if (view.family === "grid") root.replaceChildren(renderGrid(view, seats, legal, onPick, clocks));
  else root.replaceChildren(renderShedding(view, seats, legal, onPick, clocks, render));
  const buttons = !view ? [] : view.family === "grid" ? gridButtons(legal, onPick) : sheddingButtons(view, legal, onPick);
  bar.replaceChildren(...buttons, ...lobbyButtons(summary));
  document.body.dataset.phase = seen.status?.phase || "lobby";
  document.body.dataset.version = String(seen.version);
  document.body.dataset.legal = String(legal.length);
  tick();
  const hand = seen.status?.phase === "game_over" ? Infinity : seen.status?.hand ?? 0;
  if (hand !== lastHand) {
    lastHand = hand;
    showScores();
  }
}

function tick() {
  for (const clock of document.querySelectorAll(".clock[data-deadline]")) {
    const left = Math.max(0, Math.ceil((Date.parse(clock.dataset.deadline) - Date.now()) / 1000));
    clock.textContent = ` \u23f1 ${left}s`;
    clock.setAttribute("aria-label", `${left} seconds left`);
  }
}

// The stream ends with the game; a rematch asked for later is seen by reading the game now
// and then until one is linked.
function awaitRematch() {
  if (state.summary?.rematch || state.seen?.status?.phase !== "game_over") return;
  setTimeout(() => refresh().then(awaitRematch), 3000);
}

async function start() {
  if (mode === "play" && !held) {
    say("This browser holds no seat of this game: watching it instead.", "error");
    history.replaceState(null, "", `/watch/${gameId}`);
  }
  document.body.dataset.mode = held ? "seat" : "spectator";
  await refresh();
  setInterval(tick, 1000);
  state.stream = follow(`/games/${gameId}/stream`, held?.token, () => refresh(), (live) => {
    document.body.dataset.stream = live;
    if (live === "ended") refresh().then(awaitRematch);
  });
}

start();
