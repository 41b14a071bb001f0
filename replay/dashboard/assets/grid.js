// The grid page: its cells, the score chart and compare's tables; a cell's run page opens in
// place at #cell/<id> (its data is in the page), so no server is needed to follow a link.
"use strict";

const RANK_MARK = {1: " *", 2: " †"};

function cellsTable(cells) {
  const head = ["cell", "state", "method", "seed", "test score", "initial", "spent / B",
                "paid $", "check"].map((title, i) => ({title, numeric: [3, 4, 5, 6, 7].includes(i)}));
  return table(head, cells.map((c) => el("tr", {"data-cell": c.id},
    el("td", {}, c.state === "pending" ? c.id : el("a", {href: "#cell/" + c.id}, c.id)),
    el("td", {class: "state-" + c.state, title: c.error}, c.state),
    el("td", {}, c.method ?? "—"), el("td", {class: "num"}, c.seed ?? "—"),
    el("td", {class: "num c-score"}, fmt.num(c.score, 2)),
    el("td", {class: "num"}, fmt.num(c.initial, 2)),
    el("td", {class: "num c-spent"}, c.budget ? `${c.spent}/${c.budget}` : "—"),
    el("td", {class: "num c-cost"}, c.cost === null ? "—" : fmt.num(c.cost, 4)),
    el("td", {}, c.check ?? "—"))), {id: "cells-table"});
}

function compareTable(t) {
  const rows = [];
  let group;
  for (const row of t.rows) {
    if (row.group !== group && row.group !== null) {
      rows.push(el("tr", {class: "group"}, el("td", {colspan: t.columns.length}, el("i", {}, row.group))));
    }
    group = row.group;
    rows.push(el("tr", {}, row.cells.map((cell, i) => el("td", {
      class: [t.columns[i].numeric ? "num" : "", cell.rank ? "rank" + cell.rank : ""].join(" "),
      "data-rank": cell.rank}, cell.text + (RANK_MARK[cell.rank] || "")))));
  }
  return el("div", {class: "compare", "data-table": t.id}, el("h3", {}, t.title),
            table(t.columns, rows), t.notes.map((n) => el("div", {class: "dim"}, n)));
}

function scoreChart(div, points) {
  const datasets = [...new Set(points.map((p) => p.dataset))];
  plot(div, datasets.map((d) => {
    const mine = points.filter((p) => p.dataset === d);
    return {type: "box", name: d, boxpoints: "all", jitter: 0.3, pointpos: 0,
            x: mine.map((p) => p.method), y: mine.map((p) => p.score),
            text: mine.map((p) => `${p.cell} (seed ${p.seed})`), hoverinfo: "y+text"};
  }), {boxmode: "group", yaxis: {title: {text: "test score (0–100)"}},
       xaxis: {title: {text: "method or ablation"}}});
}

function gridPage(root, title) {
  const page = {containers: {}, run: null, cell: null};
  const gridView = el("div", {id: "grid-view"});
  const cellView = el("div", {id: "cell-view"});
  root.append(gridView, cellView);
  gridView.append(el("h1", {}, title));
  for (const [name, heading] of [["status", null], ["cells", "Cells"], ["chart", "Test score by method over seeds"],
                                 ["tables", "Tables"]]) {
    if (heading) gridView.append(el("h2", {}, heading));
    if (name === "chart") gridView.append(page.chartDiv = el("div", {class: "chart", id: "chart-scores"}));
    gridView.append(page.containers[name] = el("div", {id: "grid-" + name}));
  }
  const RENDER = {
    status: (s) => statusLine(s.status),
    cells: (s) => cellsTable(s.cells),
    chart: (s) => { scoreChart(page.chartDiv, s.chart);
                    return s.chart.length ? [] : el("div", {class: "dim"}, "no test scores yet"); },
    tables: (s) => (s.tables.length ? s.tables.map(compareTable) :
                    el("div", {class: "dim"}, s.tables_note || "no runs to tabulate yet")),
  };
  page.route = () => {
    const hash = decodeURIComponent(location.hash.slice(1));
    const cell = hash.startsWith("cell/") ? hash.slice(5) : null;
    gridView.hidden = cell !== null;
    cellView.hidden = cell === null;
    if (cell !== page.cell) {
      page.cell = cell;
      cellView.replaceChildren();
      page.run = null;
      if (cell !== null) {
        cellView.append(el("nav", {class: "crumbs"}, el("a", {href: "#"}, "← the grid")));
        const body = el("div", {});
        cellView.append(body);
        page.run = runPage(body, cell);
        const data = page.sections["run:" + cell];
        if (data) page.run.update(data, Object.keys(data));
        else body.append(el("div", {class: "status warn"}, `${cell}: not started yet`));
        window.scrollTo(0, 0);
      } else window.dispatchEvent(new Event("resize"));  // the chart was drawn while hidden
    }
  };
  page.update = (sections, changed) => {
    page.sections = sections;
    for (const name of Object.keys(RENDER)) {
      if (changed.includes(name) || (name === "tables" && changed.includes("tables_note"))) {
        fill(page.containers[name], () => RENDER[name](sections));
      }
    }
    if (page.cell !== null && page.run && changed.includes("run:" + page.cell)) {
      const data = sections["run:" + page.cell];
      page.run.update(data, Object.keys(data));
    }
  };
  window.addEventListener("hashchange", page.route);
  return page;
}
