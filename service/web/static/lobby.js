// The lobby: open games by state (the lobby read model, paged), a form to create a game with
// bots and a turn clock, claiming a free seat, and this browser's own games.

import { api, h, seatName, tokens } from "./api.js";
import { keepReceipt } from "./receipts.js";

const notice = document.getElementById("notice");
const nameInput = document.getElementById("name");
const form = document.getElementById("create");
const variants = new Map();

function say(text, kind = "info") {
  notice.textContent = text;
  notice.className = `notice ${kind}`;
}

function myName() {
  const name = nameInput.value.trim();
  if (!name) {
    nameInput.focus();
    throw new Error("Type your name first.");
  }
  tokens.keepName(name);
  return name;
}

async function claim(gameId, seat) {
  const made = await api("POST", `/games/${gameId}/seats`, { body: { name: myName(), seat } });
  keepReceipt(made.receipt);
  tokens.keepSeat(gameId, { seat: made.seat, token: made.token, name: nameInput.value.trim() });
  return made;
}

function seatRows() {
  const count = Number(form.seats.value);
  const rows = document.getElementById("seat-kinds");
  const kept = [...rows.querySelectorAll("select")].map((s) => s.value);
  rows.replaceChildren(...Array.from({ length: count }, (_, seat) => h("label", {},
    `seat ${seat + 1}: `,
    h("select", { name: `seat-${seat}` },
      ["person", "greedy", "random"].map((kind) => h("option", {
        value: kind, selected: (kept[seat] || (seat === 0 ? "person" : "greedy")) === kind,
      }, kind === "person" ? (seat === 0 ? "you" : "a person") : `${kind} bot`))))));
}

function variantChanged() {
  const info = variants.get(form.variant.value);
  if (!info) return;
  form.seats.min = info.min_players;
  form.seats.max = info.max_players;
  form.seats.value = Math.min(Math.max(Number(form.seats.value), info.min_players), info.max_players);
  for (const option of ["hands", "turn_limit", "grab_min", "grab_max"]) {
    form[option].closest("label").hidden = !info.options.includes(option);
  }
  seatRows();
}

async function create(event) {
  event.preventDefault();
  try {
    const name = myName();
    const seats = Number(form.seats.value);
    const bots = [];
    for (let seat = 0; seat < seats; seat += 1) {
      const kind = form[`seat-${seat}`].value;
      if (kind !== "person") bots.push({ seat, level: kind });
    }
    if (bots.some((b) => b.seat === 0)) throw new Error("Seat 1 is yours: make it a person.");
    const options = {};
    for (const option of ["hands", "turn_limit", "grab_min", "grab_max", "turn_seconds"]) {
      const field = form[option];
      if (field.value && !field.closest("label").hidden) options[option] = Number(field.value);
    }
    const body = { variant: form.variant.value, seats, bots, options };
    if (form.elements.title.value.trim()) body.title = form.elements.title.value.trim();
    const made = await api("POST", "/games", { body });
    tokens.keepCreator(made.game_id, made.creator_token);
    const mine = await api("POST", `/games/${made.game_id}/seats`, { body: { name, seat: 0 } });
    tokens.keepSeat(made.game_id, { seat: mine.seat, token: mine.token, name });
    keepReceipt(mine.receipt);
    const now = await api("GET", `/games/${made.game_id}`);
    if (!now.started && now.seats.every((s) => s.name || s.bot)) {
      // Every seat held (bots start such a game by themselves; a game of people waits)
      await api("POST", `/games/${made.game_id}/start`, { token: made.creator_token, body: {} });
    }
    location.assign(`/play/${made.game_id}`);
  } catch (error) {
    say(`Could not create the game: ${error.message}`, "error");
  }
}

function listing(game) {
  const held = tokens.seat(game.game_id);
  const seats = game.seats.map((s) => h("li", {}, h("span", { class: "name" }, seatName(s))));
  const actions = [];
  if (held) actions.push(h("a", { class: "action", href: `/play/${game.game_id}` }, "play"));
  if (!held && game.status === "lobby") {
    for (const seat of game.free_seats) {
      actions.push(h("button", {
        type: "button", class: "action claim", dataset: { seat: String(seat) },
        onclick: async () => {
          try {
            await claim(game.game_id, seat);
            location.assign(`/play/${game.game_id}`);
          } catch (error) {
            say(`Could not claim the seat: ${error.message}`, "error");
          }
        },
      }, `claim seat ${seat + 1}`));
    }
  }
  actions.push(h("a", { class: "action", href: `/watch/${game.game_id}` }, "watch"));
  return h("li", { class: "game", dataset: { game: game.game_id } },
    h("div", {}, h("strong", { class: "title" }, game.title || "(untitled)"), ` \u00b7 ${game.variant}`,
      game.status === "playing" ? ` \u00b7 hand ${game.hand}` : ""),
    h("ul", { class: "seat-names" }, seats), h("div", { class: "buttons" }, actions));
}

function section(id, filter) {
  const box = document.getElementById(id);
  const list = box.querySelector("ul.games");
  const more = box.querySelector("button.more");
  let cursor = null;
  async function load(first) {
    const query = new URLSearchParams({ ...filter, limit: "10" });
    const variant = document.getElementById("filter").value;
    if (variant) query.set("variant", variant);
    if (!first && cursor) query.set("cursor", cursor);
    try {
      const page = await api("GET", `/games?${query}`);
      cursor = page.next_cursor;
      const items = page.games.map(listing);
      if (first) list.replaceChildren(...items);
      else list.append(...items);
      if (first && !items.length) list.append(h("li", { class: "empty" }, "none"));
      more.hidden = !cursor;
    } catch (error) {
      list.replaceChildren(h("li", { class: "error" }, `Could not list: ${error.message}`));
    }
  }
  more.addEventListener("click", () => load(false));
  return load;
}

async function myGames() {
  const list = document.getElementById("mine-list");
  const held = Object.entries(tokens.seats());
  if (!held.length) {
    list.replaceChildren(h("li", { class: "empty" }, "This browser holds no seat yet."));
    return;
  }
  const rows = await Promise.all(held.slice(-20).reverse().map(async ([gameId, seat]) => {
    try {
      const summary = await api("GET", `/games/${gameId}`, { token: seat.token });
      const phase = summary.status?.phase || "waiting for players";
      const rematch = phase === "game_over" ? h("button", { type: "button", class: "action", onclick: async () => {
        try {
          const made = await api("POST", `/games/${gameId}/rematch`, { token: seat.token, body: {} });
          tokens.keepSeat(made.game_id, { ...seat });
          location.assign(`/play/${made.game_id}`);
        } catch (error) {
          say(`Could not ask for a rematch: ${error.message}`, "error");
        }
      } }, summary.rematch ? "to the rematch" : "rematch") : "";
      return h("li", { class: "game" }, h("strong", { class: "title" }, summary.title || "(untitled)"),
        ` \u00b7 ${summary.variant} \u00b7 seat ${seat.seat + 1} \u00b7 ${phase.replace("_", " ")} `,
        h("a", { class: "action", href: `/play/${gameId}` }, phase === "game_over" ? "see the end" : "play"), " ", rematch);
    } catch {
      return null;
    }
  }));
  list.replaceChildren(...rows.filter(Boolean));
}

async function start() {
  nameInput.value = tokens.name();
  const known = await api("GET", "/variants");
  const filter = document.getElementById("filter");
  for (const info of known) {
    variants.set(info.name, info);
    form.variant.append(h("option", { value: info.name, selected: info.name === "golf" }, info.name));
    filter.append(h("option", { value: info.name }, info.name));
  }
  form.variant.addEventListener("change", variantChanged);
  form.seats.addEventListener("change", seatRows);
  form.addEventListener("submit", create);
  variantChanged();
  const loads = [
    section("open", { status: "lobby", open: "true" }),
    section("playing", { status: "playing" }),
    section("finished", { status: "finished" }),
  ];
  const reload = () => Promise.all(loads.map((load) => load(true)));
  filter.addEventListener("change", reload);
  document.getElementById("refresh").addEventListener("click", () => { reload(); myGames(); });
  await Promise.all([reload(), myGames()]);
  document.body.dataset.ready = "yes";
}

start();
