// An organiser's page: open a tournament, register its players (people, or bots of a
// level the API names), start each round. The organiser's token and the players' tokens
// (to hand to each player) stay in this browser; a bot player has no token.

import { api, h } from "./api.js";

const KEY = "fairway.organisers";
const BOT_LEVELS = ["random", "greedy", "strong"]; // POST /tournaments/{id}/players `bot`
let kind = "person"; // what the registration form offers first: the last kind registered
const form = document.getElementById("create");
const notice = document.getElementById("notice");

function kept() {
  try {
    return JSON.parse(localStorage.getItem(KEY) || "{}") || {};
  } catch {
    return {};
  }
}

function keep(id, value) {
  const all = kept();
  all[id] = value;
  localStorage.setItem(KEY, JSON.stringify(all));
}

function say(text, kind = "info") {
  notice.textContent = text;
  notice.className = `notice ${kind}`;
}

async function create(event) {
  event.preventDefault();
  const body = {
    name: form.elements.name.value.trim(),
    variant: form.variant.value,
    table_size: Number(form.table_size.value),
    rounds: Number(form.rounds.value),
    seating: form.seating.value,
    duplicate: form.duplicate.checked,
  };
  if (form.hands.value) body.options = { hands: Number(form.hands.value) };
  try {
    const made = await api("POST", "/tournaments", { body });
    keep(made.tournament_id, { token: made.organiser_token, players: {} });
    await manage(made.tournament_id);
  } catch (error) {
    say(`Could not open the tournament: ${error.message}`, "error");
  }
}

async function manage(id) {
  const mine = kept()[id];
  const info = await api("GET", `/tournaments/${id}`);
  const box = document.getElementById("manage");
  const name = h("input", { id: "player", maxlength: "40", required: true, "aria-label": "player's name" });
  const level = h("select", { id: "player-kind", "aria-label": "a person or a bot" },
    h("option", { value: "person", selected: kind === "person" }, "a person"),
    BOT_LEVELS.map((bot) => h("option", { value: bot, selected: kind === bot }, `a ${bot} bot`)));
  const register = h("form", { class: "buttons", id: "register", onsubmit: async (event) => {
    event.preventDefault();
    const body = { name: name.value.trim() };
    if (level.value !== "person") body.bot = level.value;
    try {
      const made = await api("POST", `/tournaments/${id}/players`, { token: mine.token, body });
      if (made.token) mine.players[made.name] = made.token;
      keep(id, mine);
      kind = level.value;
      say(made.bot ? `Registered ${made.name}, a ${made.bot} bot.` : `Registered ${made.name}.`);
      await manage(id);
      document.getElementById("player")?.focus();
    } catch (error) {
      say(`Could not register ${body.name || "the player"}: ${error.message}`, "error");
    }
  } }, name, level, h("button", { type: "submit" }, "register"));
  const next = h("button", { type: "button", id: "next-round", class: "primary", onclick: async () => {
    try {
      const round = await api("POST", `/tournaments/${id}/rounds`, { token: mine.token, body: {} });
      say(`Round ${round.round} started: ${round.tables.length} table(s).`);
    } catch (error) {
      say(`Could not start the round: ${error.message}`, "error");
    }
    await manage(id);
  } }, "start the next round");
  box.replaceChildren(
    h("h2", {}, info.name), h("p", {}, `${info.variant} \u00b7 ${info.phase.replace("_", " ")} \u00b7 round ${info.played.length} of ${info.rounds} \u00b7 `,
      h("a", { href: `/standings/${id}` }, "standings")),
    info.phase === "registering" ? register : "",
    h("h3", {}, "Players"),
    h("ul", { class: "games", id: "players" }, info.players.map((p) => h("li", { class: "game", dataset: p.bot ? { bot: p.bot } : {} },
      h("span", { class: "name" }, p.name),
      p.bot ? h("span", { class: "bot" }, `${p.bot} bot`) : "",
      p.withdrawn ? h("small", {}, "withdrawn") : "",
      mine.players[p.name] ? h("small", {}, " token to hand over: ", h("code", {}, mine.players[p.name])) : ""))),
    info.phase === "ended" ? h("p", {}, "The tournament has ended.") : next,
  );
  box.hidden = false;
  document.body.dataset.phase = info.phase;
  document.body.dataset.round = String(info.played.length);
}

async function start() {
  const variants = await api("GET", "/variants");
  for (const v of variants) form.variant.append(h("option", { value: v.name, selected: v.name === "golf" }, v.name));
  form.addEventListener("submit", create);
  const list = document.getElementById("mine");
  const ids = Object.keys(kept());
  list.replaceChildren(...ids.map((id) => h("li", {}, h("button", { type: "button", onclick: () => manage(id) }, `manage ${id}`), " ",
    h("a", { href: `/standings/${id}` }, "standings"))));
  document.body.dataset.ready = "yes";
}

start();
