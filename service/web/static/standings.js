// A tournament's standings, live (the NDJSON stream), or as of any closed round; each
// round's tables with links to their games and replays; the standings as a CSV file.

import { ApiProblem, api, h, tokens } from "./api.js";

const tournamentId = location.pathname.split("/")[2];
const say = (text) => { document.getElementById("notice").textContent = text; };
const state = { live: null, asOf: "live" };

function rowsTable(standings) {
  const columns = ["rank", "player", "total", "games", "hands", "won", "average", "byes"];
  return h("table", { class: "standings" },
    h("caption", {}, standings.live ? `live, round ${standings.round} in play` : `as of round ${standings.round}`,
      standings.ended ? " (ended)" : ""),
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, standings.rows.map((row) => h("tr", { class: row.withdrawn ? "withdrawn" : "" },
      columns.map((c) => (c === "player"
        ? h("th", { scope: "row", class: "name" }, row.player, row.withdrawn ? " (withdrawn)" : "")
        : h("td", {}, row[c] === null ? "-" : c === "average" ? row[c].toFixed(2) : String(row[c]))))))));
}

function show(standings) {
  document.getElementById("rows").replaceChildren(rowsTable(standings));
  document.body.dataset.revision = String(standings.revision);
  document.body.dataset.ended = String(standings.ended);
}

async function follow() {
  // One line a change; a blank line keeps the connection open. Reconnect while not ended.
  while (!state.live?.ended) {
    try {
      const response = await fetch(`/tournaments/${tournamentId}/standings/stream`, { cache: "no-store" });
      if (!response.ok) throw new ApiProblem(response.status, await response.json().catch(() => ({})));
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, end).trim();
          buffer = buffer.slice(end + 1);
          if (!line) continue;
          state.live = JSON.parse(line);
          if (state.asOf === "live") show(state.live);
          await rounds();
        }
      }
    } catch (error) {
      say(`The standings' stream: ${error.message}; reconnecting`);
    }
    if (!state.live?.ended) await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

// The players' tokens the organiser's page kept in this browser: a table of theirs can be
// played from here (a tournament token acts in every game of its player).
function playersHere() {
  try {
    return JSON.parse(localStorage.getItem("fairway.organisers") || "{}")[tournamentId]?.players || {};
  } catch {
    return {};
  }
}

function playLinks(table) {
  if (table.status === "ended") return [];
  const here = playersHere();
  return table.players.map((name, seat) => (here[name] ? h("a", {
    href: `/play/${table.game_id}`, class: "play-as",
    onclick: () => tokens.keepSeat(table.game_id, { seat, token: here[name], name }),
  }, `play as ${name}`) : "")).filter(Boolean).flatMap((link) => [link, " "]);
}

function replayLink(url) {
  const [, , gameId, , hand] = url.split("/");
  return h("a", { href: `/replay/${gameId}?hand=${hand}` }, `hand ${hand}`);
}

async function rounds() {
  const info = await api("GET", `/tournaments/${tournamentId}`);
  document.getElementById("title").textContent = info.name;
  document.getElementById("facts").textContent = `${info.variant} \u00b7 tables of ${info.table_size} \u00b7 ${info.rounds} rounds \u00b7 ${info.phase.replace("_", " ")}`;
  const picker = document.getElementById("as-of");
  const closed = info.played.filter((r) => r.state === "closed").map((r) => String(r.round));
  const offered = [...picker.options].map((o) => o.value).slice(1);
  for (const round of closed.filter((r) => !offered.includes(r))) picker.append(h("option", { value: round }, `as of round ${round}`));
  const sections = await Promise.all(info.played.map(async (round) => {
    const results = await api("GET", `/tournaments/${tournamentId}/rounds/${round.round}/results`).catch(() => null);
    if (!results) return null;
    return h("section", { class: "panel", "aria-label": `round ${round.round}` }, h("h3", {}, `Round ${round.round} (${results.status})`),
      results.byes.length ? h("p", {}, "byes: ", results.byes.join(", ")) : "",
      h("ul", { class: "games" }, results.tables.map((table) => h("li", { class: "game" },
        h("strong", {}, `table ${table.table}`), " ",
        h("span", { class: "name" }, table.players.map((p, i) => `${p}: ${table.totals?.[i] ?? "-"}`).join(", ")),
        ` (${table.status}) `, h("a", { href: `/watch/${table.game_id}` }, "watch"), " ", playLinks(table),
        (table.links?.replays || []).map(replayLink)))));
  }));
  document.getElementById("rounds").replaceChildren(...sections.filter(Boolean));
}

async function csv() {
  const response = await fetch(`/tournaments/${tournamentId}/standings${state.asOf === "live" ? "" : `?round=${state.asOf}`}`, { headers: { Accept: "text/csv" } });
  const link = h("a", { href: URL.createObjectURL(await response.blob()), download: `standings-${tournamentId}.csv` });
  document.body.append(link);
  link.click();
  link.remove();
}

async function start() {
  const picker = document.getElementById("as-of");
  picker.addEventListener("change", async () => {
    state.asOf = picker.value;
    if (state.asOf === "live") {
      if (state.live) show(state.live);
    } else {
      show(await api("GET", `/tournaments/${tournamentId}/standings?round=${state.asOf}`));
    }
  });
  document.getElementById("csv").addEventListener("click", csv);
  await rounds();
  document.body.dataset.ready = "yes";
  await follow();
}

start().catch((error) => say(`Could not load the tournament: ${error.message}`));
