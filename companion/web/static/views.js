// The page's views (table, sheet, history, device), switched with the bottom bar. The view is
// the URL's hash (#sheet; #history/3 looks at game 3), so a reload or a shared link keeps it.
"use strict";

window.CT = window.CT || {};
(function (CT) {
  const VIEWS = ["table", "sheet", "history", "device"];
  const listeners = [];

  // "#history/3" -> {view: "history", arg: "3"}; "#code-card" -> the view holding that card,
  // scrolled to it; anything else is the table.
  function parse(hash) {
    const [view, arg] = (hash || "").replace(/^#/, "").split("/");
    if (VIEWS.includes(view)) return { view, arg: arg || "" };
    const target = view ? document.getElementById(view) : null;
    const holder = target ? target.closest(".view") : null;
    if (holder) return { view: holder.dataset.view, arg: "", target };
    return { view: "table", arg: "" };
  }

  function show() {
    const { view, arg, target } = parse(window.location.hash);
    for (const section of document.querySelectorAll(".view")) {
      section.hidden = section.dataset.view !== view;
    }
    for (const link of document.querySelectorAll("#views a")) {
      if (link.dataset.view === view) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    document.body.dataset.view = view;
    for (const listener of listeners) listener(view, arg);
    if (target) target.scrollIntoView({ block: "start" });
  }

  // go("sheet"), go("history", 3): a new history entry, so the phone's Back button goes back.
  CT.go = function go(view, arg) {
    const hash = `#${view}${arg !== undefined && arg !== "" ? `/${arg}` : ""}`;
    if (window.location.hash === hash) show(); else window.location.hash = hash;
  };
  CT.view = () => parse(window.location.hash);
  CT.onView = (listener) => listeners.push(listener);

  window.addEventListener("hashchange", show);
  document.addEventListener("DOMContentLoaded", show);
})(window.CT);
