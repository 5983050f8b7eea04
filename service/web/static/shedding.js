// Tens-shedding's table: each player's four stacks (a face-up card on a face-down one), the
// viewer's hand, the pile and the rank to beat. A click on a card of a listed rank plays it;
// choosing the four stack cards is picking four cards of the hand, then confirming.

import { h, seatName } from "./api.js";
import { cardFace, cardSlot, cardWords } from "./cards.js";

const picked = new Set(); // indices into the hand while choosing stacks

function stacks(player, mine, legal, onPick) {
  const row = h("div", { class: "stacks", role: "group", "aria-label": "stacks" });
  for (let i = 0; i < Math.max(player.face_up.length, player.face_down.length, 4); i += 1) {
    const up = player.face_up[i] ?? null;
    const down = player.face_down[i] ?? false;
    const options = mine ? legal.filter((a) => a.type === "play" && (a.stacks || []).includes(i)) : [];
    const blind = mine ? legal.find((a) => a.type === "play-blind" && a.stack === i) : null;
    const cell = h("div", { class: `stack${up && down ? " on-down" : ""}` });
    if (up) {
      const action = options.length ? { type: "play", hand: [], stacks: [i] } : null;
      const under = down ? " on a face-down card" : "";
      cell.append(cardSlot(up, { action, onPick, label: `stack ${i + 1}, ${cardWords(up)}${under}` }));
    } else if (down) {
      cell.append(cardSlot(null, { action: blind, onPick, label: `stack ${i + 1}, face down` }));
    } else {
      cell.append(h("span", { class: "slot" }, h("span", { class: "card none", role: "img", "aria-label": `stack ${i + 1} empty` })));
    }
    row.append(cell);
  }
  return row;
}

function hand(player, legal, onPick, rerender) {
  const cards = player.hand || [];
  const choosing = legal.find((a) => a.type === "choose-stacks");
  const row = h("div", { class: "hand", role: "group", "aria-label": "your hand" });
  cards.forEach((card, index) => {
    let action = null;
    let extra = "";
    if (choosing) {
      action = { type: "pick", card, index };
      if (picked.has(index)) extra = "picked";
    } else {
      const option = legal.find((a) => a.type === "play" && a.rank === card[0] && (a.hand || []).includes(card));
      if (option) action = { type: "play", hand: [card], stacks: [] };
    }
    const pick = (a) => {
      if (a.type !== "pick") return onPick(a);
      if (picked.has(a.index)) picked.delete(a.index);
      else if (picked.size < choosing.count) picked.add(a.index);
      rerender();
    };
    row.append(cardSlot(card, { action, onPick: pick, state: picked.has(index) ? "in hand, picked" : "in hand", extra }));
  });
  return row;
}

export function renderShedding(view, seats, legal, onPick, deadlines, rerender) {
  const wrap = h("div", { class: "table shedding-table" });
  const top = view.pile.length ? view.pile[view.pile.length - 1] : null;
  wrap.append(h("div", { class: "centre", role: "group", "aria-label": "the middle of the table" },
    h("div", { class: "pile" }, top ? cardSlot(top) : h("span", { class: "card none" }),
      h("small", {}, `pile (${view.pile.length})${view.current_rank ? `, to beat: ${view.current_rank}` : ""}`)),
    h("div", { class: "pile" }, h("span", { class: "slot" }, cardFace(null)),
      h("small", { class: "stock-count" }, `stock: ${view.undealt_count}`)),
    h("div", { class: "pile" }, h("small", {}, `burned: ${view.burned_count}`))));
  const players = h("div", { class: "seats" });
  for (const player of view.players) {
    const info = seats[player.seat] || { seat: player.seat, name: null, bot: null };
    const mine = view.viewer === player.seat;
    const turn = (view.to_act || []).includes(player.seat);
    const box = h("section", {
      class: `seat${turn ? " to-act" : ""}${mine ? " me" : ""}`,
      "aria-label": `seat ${player.seat + 1}`, dataset: { seat: String(player.seat) },
    },
      h("h3", {}, h("span", { class: "name" }, seatName(info)), mine ? " (you)" : "",
        turn ? h("span", { class: "turn" }, "to act") : "",
        deadlines[player.seat] ? h("span", { class: "clock", dataset: { deadline: deadlines[player.seat] } }) : ""),
      h("p", { class: "total" }, `total ${player.total ?? view.totals[player.seat] ?? 0}, ${player.hand_size} in hand`),
      stacks(player, mine, legal, onPick));
    if (mine) box.append(hand(player, legal, onPick, rerender));
    players.append(box);
  }
  wrap.append(players);
  return wrap;
}

export function sheddingButtons(view, legal, onPick) {
  const buttons = [];
  const choosing = legal.find((a) => a.type === "choose-stacks");
  const me = view.players.find((p) => p.seat === view.viewer);
  if (choosing && me) {
    const cards = [...picked].map((i) => me.hand[i]);
    const ready = cards.length === choosing.count;
    buttons.push(h("button", {
      type: "button", class: ready ? "legal action" : "action", disabled: !ready,
      dataset: ready ? { action: JSON.stringify({ type: "choose-stacks", cards }) } : {},
      onclick: () => { picked.clear(); onPick({ type: "choose-stacks", cards }); },
    }, ready ? "put these four on my stacks" : `pick ${choosing.count - cards.length} more card(s) for your stacks`));
  } else {
    picked.clear();
  }
  for (const option of legal.filter((a) => a.type === "play")) {
    const all = { type: "play", hand: option.hand || [], stacks: option.stacks || [] };
    const count = all.hand.length + all.stacks.length;
    if (count > 1) {
      buttons.push(h("button", { type: "button", class: "legal action", dataset: { action: JSON.stringify(all) }, onclick: () => onPick(all) },
        `play every ${option.rank} (${count})`));
    }
  }
  const end = legal.find((a) => a.type === "end-play");
  if (end) buttons.push(h("button", { type: "button", class: "legal action", dataset: { action: JSON.stringify(end) }, onclick: () => onPick(end) }, "end the play"));
  return buttons;
}
