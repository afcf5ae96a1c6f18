// The games kept on the device (History view): look at an earlier one, read-only, or resume it
// at the table (after asking: every phone follows). "#history/3" keeps game 3 open on reload.
"use strict";

window.CT = window.CT || {};
(function (CT) {
  const { el } = CT;
  const $ = (id) => document.getElementById(id);
  const STAGE = {
    seating: "seating", setup: "set-up", tray: "playing", actions: "playing", round_end: "playing",
    pirate: "playing", final: "final scoring", over: "over",
  };
  let tableId = null; // the game at the table, as this phone last saw it

  function when(unixSeconds) {
    return unixSeconds ? new Date(unixSeconds * 1000).toLocaleString([], { dateStyle: "medium", timeStyle: "short" }) : "";
  }

  function describe(g) {
    const bits = [g.title || `Game ${g.id}`];
    if (g.players) bits.push(g.players.join(", "));
    if (g.problem) bits.push(`cannot be read: ${g.problem}`);
    else if (g.stage === "over") bits.push(g.winner ? `over, ${g.winner} won` : "over");
    else if (g.stage) bits.push(g.round ? `round ${g.round}, ${STAGE[g.stage] || g.stage}` : STAGE[g.stage] || g.stage);
    return bits.join(" · ");
  }

  async function load() {
    try {
      const response = await fetch("/api/games");
      if (!response.ok) return;
      const { games } = await response.json();
      $("games").replaceChildren(...games.map((g) => el("li", { class: g.at_table ? "at-table" : "", dataset: { game: g.id } },
        el("span", { class: "game-line" }, el("b", { text: describe(g) }),
          el("small", { class: "muted", text: ` ${when(g.created_at)}${g.at_table ? " · at the table" : ""}` })),
        el("span", { class: "button-row" },
          el("button", { type: "button", class: "secondary small look", text: "Look", onclick: () => CT.go("history", g.id) }),
          g.at_table || g.problem ? null : el("button", {
            type: "button", class: "secondary small resume", text: "Resume", onclick: (e) => resume(g, e.currentTarget),
          })))));
    } catch (err) { /* offline: the list stays as it was */ }
  }

  async function resume(g, near) {
    const now = CT.game();
    const current = now && now.id !== null ? ` ${now.state.name ? `"${now.state.name}"` : `Game ${now.id}`} stays on the device.` : "";
    if (!await CT.ask(`Resume ${g.title ? `"${g.title}"` : `game ${g.id}`} at the table? Every phone switches to it.${current}`,
      "Resume it", "Cancel")) return;
    const game = await CT.post(`/api/game/${g.id}/resume`, {}, near);
    if (game) {
      CT.render(game, true);
      CT.go("table");
    }
  }

  // One earlier game, read-only: who played, the ranking and what happened.
  async function look(id) {
    const viewer = $("game-viewer");
    if (!/^\d+$/.test(id)) { viewer.hidden = true; viewer.replaceChildren(); return; }
    viewer.hidden = false;
    viewer.replaceChildren(el("p", { class: "muted", text: "Loading…" }));
    let game;
    try {
      const response = await fetch(`/api/game/${encodeURIComponent(id)}`);
      game = await response.json();
      if (!response.ok) { viewer.replaceChildren(el("p", { class: "refusal", text: game.error || "no such game" })); return; }
    } catch (err) {
      viewer.replaceChildren(el("p", { class: "refusal", text: `Could not reach the device: ${err.message}` }));
      return;
    }
    const sheet = game.score_sheet;
    const state = game.state;
    const lines = [...game.history].reverse().map((h) => el("li", { value: h.n, class: h.in_force ? "" : "undone" },
      el(h.in_force ? "span" : "s", { text: h.text }), h.outcome ? el("small", { class: "outcome", text: ` → ${h.outcome}` }) : null));
    viewer.replaceChildren(...[
      el("h3", { text: `${state.name || `Game ${game.id}`}${game.at_table ? " (at the table)" : " (read-only)"}` }),
      el("p", { class: "muted", text: `${state.players.map((p) => p.name).join(", ")} · ${state.round ? `round ${state.round}` : "set-up"} · ${sheet.final ? "final score" : "score if it ended now"}` }),
      el("ol", { class: "ranking" }, CT.rankingItems(sheet)), CT.tieNote(sheet),
      el("details", { class: "viewer-log" }, el("summary", { text: `What happened (${game.history.length} events)` }),
        el("ol", { class: "log", reversed: true }, lines)),
      el("div", { class: "button-row" },
        game.at_table ? null : el("button", {
          type: "button", class: "primary resume", text: "Resume this game",
          onclick: (e) => resume({ id: game.id, title: state.name }, e.currentTarget),
        }),
        el("a", { href: `/api/game/${game.id}/events.jsonl`, download: "", class: "export", text: "Download its log" }),
        el("button", { type: "button", class: "secondary close-viewer", text: "Close", onclick: () => CT.go("history") })),
    ].filter(Boolean));
    viewer.scrollIntoView({ block: "nearest" });
  }

  CT.onView((view, arg) => {
    if (view !== "history") return;
    load();
    look(arg);
  });

  // A new game or a resumed one: the list (and "at the table") changes.
  CT.onGameShown = (game) => {
    if (game.id === tableId) return;
    tableId = game.id;
    if (CT.view().view === "history") load();
  };
})(window.CT);
