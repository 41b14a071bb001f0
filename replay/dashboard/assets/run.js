// The run page: one container per section, each filled from its section of the data.
"use strict";

const VERDICT_CLASS = {accepted: "accepted", saved: "accepted"};
const STRATEGY_COLOR = {I1: "#0969da", I2: "#8250df", I3: "#bf8700"};

function checkOf(outcome, name) {
  return (outcome.checks || []).find((c) => c.name === name);
}

function wldu(o) {
  const s = o.stats;
  return `${s.wins}/${s.losses}/${s.counts.D}/${s.counts.U}`;
}

function lbText(o) {
  const s = checkOf(o, "lb_d_s"), du = checkOf(o, "lb_d_du");
  if (!s && !du) return "—";
  const limit = (s || du).limit;
  return `${fmt.num(s ? s.value : 0, 2)}/${fmt.num(du ? du.value : 0, 2)} ≤ ${fmt.num(limit, 2)}`;
}

function stageBlock(o) {
  const s = o.stats;
  const rows = (o.checks || []).map((c) => el("tr", {"data-check": c.name},
    el("td", {}, c.name), el("td", {class: "num"}, fmt.num(c.value)),
    el("td", {class: "num"}, fmt.num(c.limit)),
    el("td", {class: c.passed ? "pass" : "fail"}, c.passed ? "pass" : "FAIL: " + c.reason)));
  return el("div", {"data-stage": o.stage},
    el("h3", {}, `${o.stage}: `, el("span", {class: o.passed ? "pass" : "fail"},
                                      o.passed ? "passed" : "failed")),
    el("div", {class: "mono"}, `n ${s.n} · paired gain ${fmt.signed(s.gain)} (threshold ` +
       `${fmt.num(o.threshold)}) · wins ${s.wins} · losses ${s.losses} · S ${s.counts.S} · ` +
       `D ${s.counts.D} · U ${s.counts.U}` + (o.saveable ? " · saveable" : "")),
    rows.length ? table([{title: "check"}, {title: "value", numeric: true},
                         {title: "limit", numeric: true}, {title: "result"}], rows) :
      el("div", {class: "dim"}, "failed: " + (o.failed || []).join(", ")));
}

function diffBlock(diff) {
  const parts = diff.parts.map((p) => {
    const ops = p.ops.map(([tag, i1, i2, j1, j2]) => el("li", {}, tag === "insert" ?
      `insert candidate lines ${j1 + 1}–${j2} after parent line ${i1}` : tag === "delete" ?
      `delete parent lines ${i1 + 1}–${i2}` :
      `replace parent lines ${i1 + 1}–${i2} with candidate lines ${j1 + 1}–${j2}`));
    const rows = p.rows.map(([tag, ln, left, rn, right]) => el("tr", {class: tag},
      el("td", {class: "ln"}, ln ?? ""), el("td", {class: "l"}, left),
      el("td", {class: "ln"}, rn ?? ""), el("td", {class: "r"}, right)));
    return el("div", {class: "diff-part"}, p.part ? el("h3", {}, `part ${p.part}`) : null,
      ops.length ? el("ul", {class: "ops"}, ops) : el("div", {class: "dim"}, "(identical)"),
      el("table", {class: "diff"}, el("tr", {}, el("th", {colspan: 2}, "parent"),
                                      el("th", {colspan: 2}, "candidate")), rows));
  });
  if (diff.unchanged.length) parts.push(el("div", {class: "dim"},
                                           "unchanged parts: " + diff.unchanged.join(", ")));
  return parts;
}

function candidateBlock(c) {
  return el("details", {"data-key": "cand-" + c.id, class: "candidate", "data-candidate": c.id},
    el("summary", {}, `candidate ${fmt.short(c.id)} · ${c.operator} · ${c.verdict || "pending"}`),
    el("div", {class: "detail"},
      c.theme ? el("div", {}, "theme: ", c.theme) : null,
      c.sources.length ? el("div", {class: "dim"}, "grounded in samples: " + c.sources.join(", ")) : null,
      c.ranking !== null ? el("div", {}, "ranking-subset score: " + fmt.num(c.ranking)) : null,
      c.screening ? stageBlock(c.screening) : null,
      c.validation ? stageBlock(c.validation) : null,
      el("div", {}, "decision: ", el("span", {class: VERDICT_CLASS[c.verdict] || "rejected"},
                                     c.verdict || "pending"),
         c.reasons.length ? " — " + c.reasons.join(", ") : ""),
      c.notes.map((n) => el("div", {class: "dim"}, n)),
      el("h3", {}, `diff against its parent ${fmt.short(c.parent)}`),
      c.diff ? diffBlock(c.diff) : el("div", {class: "dim"}, "parent text not in the trace"),
      c.text !== null ? el("details", {"data-key": "text-" + c.id},
                           el("summary", {}, "candidate text"), preText(c.text)) : null));
}

function feedbackBlock(f, note, key) {
  if (!f) return null;
  const out = [el("h3", {}, "feedback")];
  if (f.batch) out.push(el("div", {}, `batch of ${f.batch.samples.length} under ` +
    `${fmt.short(f.batch.skill)}: ${f.batch.solved} solved, mean ${fmt.num(f.batch.mean)}`));
  for (const p of f.prepared) {
    out.push(el("div", {}, `feedback preparation: ${p.failures} failures shown ` +
      `(${p.checkable} blind), diagnosed ${p.diagnosed.length}, verified ${p.verified.length}` +
      `, ${p.successes.length} solved summarised` + (p.shared ? ", a shared rule written" : "") +
      (p.withheld.length ? `, withheld: ${p.withheld.join(", ")}` : "")),
      p.detail ? el("div", {class: "dim"}, p.detail) : null);
  }
  if (f.failures) {
    const shown = f.prepared.length ? f.prepared[0].failures : f.failures.length;
    out.push(el("details", {"data-key": `failures-${key}`, class: "failures"},
      el("summary", {}, `${f.failures.length} failures on the batch; the optimizer was shown ` +
         `${Math.min(shown, f.failures.length)}: inputs, replies, expected answers`),
      f.failures.map((x) => el("div", {class: "failure", "data-sample": x.sample},
        el("div", {class: "mono"}, `${x.sample} · score ${fmt.num(x.score)}`),
        el("div", {class: "dim"}, "input"), preText(x.input),
        el("div", {class: "dim"}, "reply"), preText(x.reply),
        el("div", {class: "dim"}, "expected"), preText(x.expected),
        x.summary ? el("div", {class: "dim"}, x.summary) : null))));
  } else if (note) out.push(el("div", {class: "dim"}, note));
  out.push(...f.extras.map((line) => el("div", {class: "dim"}, line)));
  return out;
}

function roundDetail(r, note) {
  const op = r.operator;
  return el("div", {class: "detail"},
    el("div", {class: "dim"}, `epoch ${r.epoch} · batch ${r.batch_index} · current ` +
       `${fmt.short(r.current)} · spent ${r.spent_start} → ${r.spent_end}`),
    op ? [el("div", {}, "operator ", el("b", {class: "op-" + op.strategy}, op.label),
             ` chosen by ${op.source}`),
          el("div", {class: "dim"}, "the selector's reason"), preText(op.why || "(none given)"),
          op.fallback ? el("div", {class: "fail"}, "fallback: " + op.detail) : null] : null,
    r.skipped.map((s) => el("div", {class: "dim"}, "skipped: " + s)),
    feedbackBlock(r.feedback, note, r.number),
    r.candidates.map(candidateBlock),
    r.invalid.map((i) => el("div", {class: "rejected"},
                            `invalid ${i.operator}: ${i.reason}` + (i.detail ? ` (${i.detail})` : ""))),
    r.unaffordable.map((line) => el("div", {class: "dim"}, line)),
    el("details", {"data-key": "events-" + r.number}, el("summary", {}, "events"),
       preText(r.events.join("\n"))));
}

function roundMatches(r, filter) {
  if (filter === "all") return true;
  if (filter === "none") return !r.operator;
  return !!r.operator && (r.operator.strategy === filter || r.operator.label === filter);
}

function idle(r) {
  return !r.operator && !r.candidates.length && !r.invalid.length;
}

// Consecutive idle rounds skipped for the same reason share one row, as in `stratune view`.
function grouped(rounds) {
  const groups = [];
  for (const r of rounds) {
    const last = groups.length ? groups[groups.length - 1] : null;
    if (last && idle(r) && idle(last[0]) && r.skipped.join() === last[0].skipped.join()) last.push(r);
    else groups.push([r]);
  }
  return groups;
}

function idleRows(group) {
  const first = group[0], end = group[group.length - 1];
  const number = group.length > 1 ? `${first.number}–${end.number}` : String(first.number);
  return [el("tr", {class: "round-first skipped", "data-round": first.number, "data-rounds": group.length},
    el("td", {class: "num"}, number), el("td", {}, "—"),
    el("td", {class: "why"}, first.skipped.length ? "skipped: " + first.skipped.join(", ") : ""),
    [...Array(6)].map(() => el("td", {class: "num"}, "—")),
    el("td", {class: "num c-spent"}, end.spent_end)),
    el("tr", {class: "detail-row", "data-round-detail": first.number},
      el("td", {colspan: 10}, el("details", {"data-key": "round-" + first.number},
        el("summary", {}, `round${group.length > 1 ? "s " + number : " " + number}: events`),
        group.map((r) => el("div", {class: "detail"}, el("div", {class: "dim"}, `round ${r.number}`),
                           preText(r.events.join("\n")))))))];
}

function roundRows(r, note) {
  const op = r.operator;
  const lines = r.candidates.length ? r.candidates : [null];
  const rows = lines.map((c, i) => el("tr", {
      class: (i === 0 ? "round-first " : "") + (op ? "" : "skipped"), "data-round": r.number,
      "data-candidate": c ? c.id : null},
    el("td", {class: "num"}, i === 0 ? r.number : ""),
    el("td", {class: op ? "op-" + op.strategy : "dim"}, i === 0 ? (op ? op.label : "—") : ""),
    el("td", {class: "why", title: op ? op.why : null}, i === 0 ?
       (op ? op.why : r.skipped.join(", ")) : ""),
    el("td", {class: "mono c-id"}, c ? fmt.short(c.id) : "—"),
    el("td", {class: "num c-scr"}, c && c.screening ? fmt.signed(c.screening.stats.gain) : "—"),
    el("td", {class: "num c-wldu"}, c && c.screening ? wldu(c.screening) : "—"),
    el("td", {class: "num c-lb"}, c && c.screening ? lbText(c.screening) : "—"),
    el("td", {class: "num c-val"}, c && c.validation ? fmt.signed(c.validation.stats.gain) : "—"),
    el("td", {class: "c-verdict " + (c ? VERDICT_CLASS[c.verdict] || "rejected" : "dim")},
       c ? c.verdict || "pending" : (r.invalid.length ? `${r.invalid.length} invalid` : "—")),
    el("td", {class: "num c-spent"}, i === 0 ? r.spent_end : "")));
  rows.push(el("tr", {class: "detail-row", "data-round-detail": r.number},
    el("td", {colspan: 10}, el("details", {"data-key": "round-" + r.number},
      el("summary", {}, `round ${r.number}: reason, feedback, ${r.candidates.length} ` +
         `candidate(s), events`), roundDetail(r, note)))));
  return rows;
}

const ROUND_HEAD = ["#", "operator", "selector's reason", "cand.", "scr. Δ", "W/L/D/U",
                    "LB S/DU ≤ limit", "val. Δ", "decision", "spent"].map(
  (title, i) => ({title, numeric: [0, 4, 5, 6, 7, 9].includes(i)}));

function filterOptions(rounds) {
  const labels = new Set(), strategies = new Set();
  for (const r of rounds) if (r.operator) { strategies.add(r.operator.strategy); labels.add(r.operator.label); }
  return ["all", ...[...strategies].sort(), ...[...labels].filter((l) => !strategies.has(l)).sort(), "none"];
}

const RUN_SECTIONS = {
  status: (s) => statusLine(s.status),
  header: (s) => kvTable(s.header),
  trajectory: (s, page) => {
    const t = s.trajectory, pts = t.points;
    plot(page.chart("trajectory"), [{
      type: "scatter", mode: "lines+markers", name: "current skill",
      line: {color: "#c8d1da", width: 1, dash: "dot"},
      x: pts.map((p) => p.spent), y: pts.map((p) => p.score),
      text: pts.map((p) => (p.round ? `round ${p.round} ` : "") + p.label),
      marker: {size: pts.map((p) => (p.accepted ? 13 : 7)),
               symbol: pts.map((p) => (p.accepted ? "triangle-up" : "circle")),
               color: pts.map((p) => (p.accepted ? "#1a7f37" :
                                      STRATEGY_COLOR[p.label.slice(0, 2)] || "#8c959f"))}}],
      {xaxis: {title: {text: `executions spent (budget ${t.budget})`}, range: [0, t.budget || 1]},
       yaxis: {title: {text: "batch score"}, range: [-0.05, 1.05]}, showlegend: false});
    return el("div", {class: "dim"}, pts.length ? t.title : "no rounds executed yet");
  },
  rounds: (s, page) => {
    if (!s.rounds.length) return el("div", {class: "dim"}, s.steps.length ? "" : "no rounds yet");
    page.setFilterOptions(filterOptions(s.rounds));
    const shown = s.rounds.filter((r) => roundMatches(r, page.filter));
    return table(ROUND_HEAD, grouped(shown).flatMap((g) => (idle(g[0]) ? idleRows(g) :
                                                            roundRows(g[0], s.failures_note))),
                 {id: "rounds-table"});
  },
  steps: (s) => (s.steps.length ? table(["#", "what", "skill", "score", "reference", "outcome"]
    .map((title) => ({title})), s.steps.map((row, i) => el("tr", {}, el("td", {}, i + 1),
                                                             row.map((v) => el("td", {}, v))))) : []),
  episodes: (s) => [s.episodes_note ? el("div", {class: "dim"}, s.episodes_note) : null,
                    ...s.episodes.map(episodeBlock)],
  costs: (s, page) => {
    if (!s.costs) return el("div", {class: "dim"}, "usage.json not written yet (written when the run ends)");
    const c = s.costs;
    plot(page.chart("costs"), [{type: "bar", name: "tokens", x: c.chart.map((r) => r.kind),
                                y: c.chart.map((r) => r.tokens)}],
         {yaxis: {title: {text: "tokens (in + out)"}}, showlegend: false});
    return [table(c.columns.map((title, i) => ({title, numeric: i >= 2})), c.rows.map((row) =>
      el("tr", {}, row.map((v, i) => el("td", {class: i >= 2 ? "num" : null}, v))))),
            el("div", {class: "dim"}, c.caption)];
  },
  final: (s) => finalBlock(s.final),
  skill: (s) => skillBlock(s.skill),
};
