// The run page's last sections and its layout.
"use strict";

function finalBlock(f) {
  const out = [];
  if (!f.final) return el("div", {class: "dim"}, "the run has not finished: no final selection yet");
  out.push(el("div", {}, `final skill ${fmt.short(f.final.id)} ` +
    (f.final.id === f.initial ? "(the initial skill)" : "") +
    ` · stop: ${f.final.reason} · ${f.final.rounds} rounds · ${f.final.spent}/${f.final.budget} spent`));
  if (f.comparisons.length) {
    const stat = (o) => `${fmt.signed(o.stats.gain)} (${o.stats.wins} W / ${o.stats.losses} L, n ${o.stats.n})`;
    out.push(table(["candidate", "against", "selection", "confirmation", "replaced"].map(
      (title) => ({title})), f.comparisons.map((c) => el("tr", {},
        el("td", {class: "mono"}, fmt.short(c.candidate)), el("td", {class: "mono"}, fmt.short(c.selected)),
        el("td", {}, stat(c.selection)), el("td", {}, stat(c.confirmation)),
        el("td", {class: c.replaced ? "accepted" : ""}, c.replaced ? "yes" : "no")))));
  }
  if (f.test) {
    out.push(el("h3", {}, `${f.test.split} split` + (f.test.n ? ` (${f.test.n} samples)` : "")),
      table([{title: "skill"}, {title: "score", numeric: true}], f.test.scores.map(([id, v]) =>
        el("tr", {"data-skill": id}, el("td", {class: "mono"}, fmt.short(id) +
          (id === f.initial ? " (initial)" : id === f.final.id ? " (final)" : "")),
           el("td", {class: "num"}, fmt.num(v))))));
  }
  return out;
}

function skillBlock(s) {
  if (!s) return el("div", {class: "dim"}, "no learned skill yet");
  const out = [el("div", {class: "mono"}, "skill " + s.id)];
  for (const p of s.parts) out.push(p.part ? el("h3", {}, "part " + p.part) : null, preText(p.text));
  if (s.files.length) {
    out.push(el("h3", {}, "files of the Agent Skills folder"));
    for (const f of s.files) {
      const what = f.link !== undefined ? `link → ${f.link}` : `${f.size} bytes`;
      out.push(f.text ? el("details", {"data-key": "file-" + f.path},
                           el("summary", {}, `${f.path} (${what})`), preText(f.text)) :
               el("div", {class: "mono"}, `${f.path} (${what})`));
    }
  }
  return out;
}

// One agent episode: its sample and score in the summary line; inside, the input, the expected
// answer, the scorer's account, then each turn's text and tool calls (arguments, result, errors
// marked), and the final answer or why there is none. A Claude Code episode: its transcript.
function episodeBlock(e) {
  const head = `${e.sample} · skill ${fmt.short(e.skill)} · round ${e.round} (${e.purpose}) · ` +
    `score ${fmt.num(e.score, 2)} · ${e.calls} calls` + (e.answer === null ? " · no answer" : "");
  const out = [kvTable([["input", e.input], ["expected", e.expected]].concat(
    e.summary ? [["problem", e.summary]] : []))];
  if (e.turns) {
    const rows = e.turns.flatMap((t) => [
      t.said ? el("tr", {}, el("td", {class: "num"}, t.turn), el("td", {}, "said"),
                  el("td", {colspan: 2}, preText(t.said))) : null,
      ...t.calls.map((c) => el("tr", {class: "call"}, el("td", {class: "num"}, t.turn),
        el("td", {class: "mono"}, c.name), el("td", {class: "mono"}, c.arguments),
        el("td", {class: c.error ? "rejected" : null}, c.result === null ?
          "(not run: the turn limit)" : (c.error ? "ERROR " : "") + c.result)))]);
    out.push(table(["turn", "call", "arguments", "result"].map((title, i) => ({title, numeric: i === 0})),
                   rows, {class: "episode-turns"}));
  } else if (e.transcript) {
    out.push(preText(e.transcript));
  }
  out.push(el("div", {class: e.answer === null ? "rejected" : "accepted"},
              e.answer === null ? e.end : `${e.end}: ${e.answer || "(empty)"}`));
  return el("details", {"data-key": `episode-${e.skill}-${e.sample}`, class: "episode"},
            el("summary", {}, head), out);
}

const RUN_LAYOUT = [
  ["status", null], ["header", "Run"], ["trajectory", "Trajectory"], ["rounds", "Rounds"],
  ["steps", "Steps"], ["episodes", "Agent episodes"], ["costs", "Cost by call kind"],
  ["final", "Final selection"], ["skill", "Learned skill"]];
// a section's data also decides whether another one is drawn again
const ALSO = {failures_note: ["rounds"], steps: ["rounds"], episodes_note: ["episodes"]};

function runPage(root, title) {
  const page = {filter: "all", containers: {}, headings: {}, charts: {}};
  root.append(el("h1", {}, title));
  for (const [name, heading] of RUN_LAYOUT) {
    if (heading) root.append(page.headings[name] = el("h2", {id: "h-" + name}, heading));
    if (name === "trajectory" || name === "costs") {
      root.append(page.charts[name] = el("div", {class: "chart", id: "chart-" + name}));
    }
    if (name === "rounds") {
      page.select = el("select", {id: "round-filter", onchange: () => {
        page.filter = page.select.value; page.update(page.sections, ["rounds"]); }});
      root.append(el("div", {class: "filter"}, "operator: ", page.select));
    }
    root.append(page.containers[name] = el("div", {id: "sec-" + name}));
  }
  page.chart = (name) => page.charts[name];
  page.setFilterOptions = (options) => {
    const have = [...page.select.options].map((o) => o.value).join("|");
    if (have !== options.join("|")) {
      page.select.replaceChildren(...options.map((o) => el("option", {value: o}, o === "none" ? "no operator" : o)));
    }
    if (!options.includes(page.filter)) page.filter = "all";
    page.select.value = page.filter;
  };
  page.update = (sections, changed) => {
    page.sections = sections;
    const names = new Set(changed.flatMap((k) => [k, ...(ALSO[k] || [])]));
    for (const [name] of RUN_LAYOUT) {
      if (!names.has(name) || !(name in sections)) continue;
      fill(page.containers[name], () => RUN_SECTIONS[name](sections, page));
    }
    // sections a run kind never has (a baseline's rounds, a StraTune run's steps) stay hidden
    const empty = {rounds: !sections.rounds.length, steps: !sections.steps.length,
                   episodes: !sections.episodes.length};
    for (const [name, hide] of Object.entries(empty)) page.headings[name].hidden = hide;
    page.select.parentNode.hidden = empty.rounds;
  };
  return page;
}
