// Boot: draw the page from the data it carries; when served (`stratune serve`), ask the server
// every second for the sections that changed since the generation it has, and draw only those.
"use strict";

(function boot() {
  const data = JSON.parse(document.getElementById("stratune-data").textContent);
  const root = document.getElementById("app");
  const page = data.kind === "grid" ? gridPage(root, data.title) : runPage(root, data.title);
  let sections = data.sections;
  page.update(sections, Object.keys(sections));
  if (page.route) page.route();
  window.stratune = {generation: data.live ? data.live.generation : null, updates: 0};
  if (!data.live) return;
  const badge = el("span", {class: "live", id: "live-badge"}, "live");
  root.prepend(badge);
  async function poll() {
    try {
      const reply = await fetch(`${data.live.endpoint}?since=${window.stratune.generation}`,
                                {cache: "no-store"});
      const change = await reply.json();
      if (change.kind !== data.kind) { location.reload(); return; }  // a grid appeared
      const changed = Object.keys(change.sections);
      if (change.generation !== window.stratune.generation) {
        sections = Object.assign({}, sections, change.sections);
        for (const key of change.removed || []) delete sections[key];
        window.stratune.generation = change.generation;
        page.update(sections, changed);
        window.stratune.updates += 1;
      }
      badge.textContent = "live · updated " + new Date().toLocaleTimeString();
    } catch (err) {
      badge.textContent = "the server stopped: this is the last state it sent";
      return;
    }
    setTimeout(poll, data.live.interval_ms);
  }
  setTimeout(poll, data.live.interval_ms);
})();
