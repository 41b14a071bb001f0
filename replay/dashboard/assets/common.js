// Shared by the run and grid pages. Every text from the trace goes into the DOM through
// textContent (el's string children), never as markup: a skill holding <script> is text.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const fmt = {
  num: (v, d = 3) => (v === null || v === undefined ? "—" : Number(v).toFixed(d)),
  signed: (v, d = 3) => (v === null || v === undefined ? "—" :
    (v >= 0 ? "+" : "") + Number(v).toFixed(d)),
  short: (id) => (id ? String(id).slice(0, 8) : "—"),
};

function statusLine(status) {
  return el("div", {class: "status " + status.level, id: "status-line"}, status.text);
}

function kvTable(rows) {
  return el("table", {class: "kv"}, rows.map(([k, v]) => el("tr", {}, el("td", {}, k),
                                                          el("td", {}, v))));
}

function table(headers, rows, attrs) {
  const head = el("tr", {}, headers.map((h) => el("th", {class: h.numeric ? "num" : null},
                                                  h.title)));
  return el("table", attrs || {}, el("thead", {}, head), el("tbody", {}, rows));
}

// A live update replaces a section's content; the details the reader opened (by data-key)
// and the scroll position stay as they were.
function openKeys(root) {
  return new Set([...root.querySelectorAll("details[open][data-key]")].map((d) => d.dataset.key));
}

function reopen(root, keys) {
  for (const d of root.querySelectorAll("details[data-key]")) {
    if (keys.has(d.dataset.key)) d.open = true;
  }
}

function fill(container, build) {
  const keys = openKeys(container);
  const x = window.scrollX, y = window.scrollY;
  container.replaceChildren(...[].concat(build()).flat(Infinity).filter(
    (n) => n !== null && n !== undefined && n !== false));
  reopen(container, keys);
  window.scrollTo(x, y);
}

const PLOT_CONFIG = {displaylogo: false, responsive: true, showLink: false,
                     modeBarButtonsToRemove: ["sendDataToCloud", "select2d", "lasso2d"]};

// Plotly.react on the same div keeps the reader's zoom (uirevision) across updates.
function plot(div, traces, layout) {
  const base = {margin: {l: 50, r: 20, t: 30, b: 50}, uirevision: "keep",
                font: {family: "system-ui, DejaVu Sans, sans-serif", size: 12},
                paper_bgcolor: "#fff", plot_bgcolor: "#fff", showlegend: true};
  window.Plotly.react(div, traces, Object.assign(base, layout), PLOT_CONFIG);
}

function chartDiv(id) {
  return document.getElementById(id) || el("div", {id, class: "chart"});
}

function preText(text) { return el("pre", {}, text); }
