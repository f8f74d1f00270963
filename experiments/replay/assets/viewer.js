// meeplelab replay viewer: draws positions computed in Python (embedded JSON); no network access.
"use strict";
const D = JSON.parse(document.getElementById("replay-data").textContent);
const N = D.steps.length - 1;  // steps[k]: the position before decision k; steps[N]: the final one
const S3 = Math.sqrt(3);
const CHART_COLORS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
                      "#1f78b4", "#b2182b"];
let current = 0;
let chartSeat = 0;

function el(id) { return document.getElementById(id); }
function esc(s) { return String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c])); }
function terrainColor(i) { return D.legend.terrains[i] ? D.legend.terrains[i].color : "#ccc"; }

// ---- candidates ------------------------------------------------------------------------------
function candidatesOn(step, board) {
  return step.candidates.filter(c => c.where && c.where.board === board);
}
function candidateStroke(c) { return c.chosen ? "#ff1f6b" : "#222"; }
function terrainByName(name) { const t = D.legend.terrains.find(t => t.name === name); return t ? t.color : "#ff1f6b"; }

// ---- Cartographers: the 11x11 grid --------------------------------------------------------------
function drawGrid(step, seat) {
  const b = step.boards[seat], st = D.static, px = 22, n = st.size;
  const ruins = new Set(st.ruins), mountains = st.mountains;
  let s = `<svg class="board" data-seat="${seat}" width="${n * px + 2}" height="${n * px + 34}" ` +
          `viewBox="-1 -1 ${n * px + 2} ${n * px + 34}">`;
  let filled = 0;
  for (let i = 0; i < n * n; i++) {
    const t = +b.cells[i], x = (i % n) * px, y = Math.floor(i / n) * px;
    if (t !== 0 && t !== 6 && t !== 7) filled++;
    s += `<rect class="cell" data-cell="${i}" data-t="${t}" x="${x}" y="${y}" width="${px}" height="${px}" ` +
         `fill="${terrainColor(t)}" stroke="#b9ad8f" stroke-width="0.6"/>`;
    if (t === 6) s += `<path d="M${x + 4} ${y + 17}L${x + 11} ${y + 5}L${x + 18} ${y + 17}Z" fill="#5b4630" stroke="#f4ecd8" stroke-width="1"/>`;
    if (t === 5) s += `<circle cx="${x + 8}" cy="${y + 9}" r="2" fill="#fff"/><circle cx="${x + 14}" cy="${y + 9}" r="2" fill="#fff"/>` +
                      `<path d="M${x + 7} ${y + 16}Q${x + 11} ${y + 12} ${x + 15} ${y + 16}" stroke="#fff" fill="none" stroke-width="1.4"/>`;
    if (t === 7) s += `<path d="M${x} ${y + px}L${x + px} ${y}" stroke="#6f6a60" stroke-width="1"/>`;
    if (ruins.has(i)) s += `<path class="ruins" d="M${x + 5} ${y + 18}V${y + 9}A6 5 0 0 1 ${x + 17} ${y + 9}V${y + 18}" ` +
                           `fill="none" stroke="${t === 0 ? "#6b5b3e" : "#fff"}" stroke-width="2"/>`;
  }
  mountains.forEach((cell, m) => {
    if (b.mountains_done[m]) {
      const x = (cell % n) * px, y = Math.floor(cell / n) * px;
      s += `<circle class="coin" cx="${x + 17}" cy="${y + 5}" r="4" fill="#f2c230" stroke="#8a6a10"/>`;
    }
  });
  candidatesOn(step, seat).slice().reverse().forEach(c => {
    c.where.cells.forEach(i => {
      const x = (i % n) * px, y = Math.floor(i / n) * px;
      s += `<rect class="candidate${c.chosen ? " chosen" : ""}" x="${x + 1.5}" y="${y + 1.5}" width="${px - 3}" height="${px - 3}" ` +
           `fill="${c.chosen ? terrainByName(c.where.terrain) : "none"}" fill-opacity="0.75" ` +
           `stroke="${candidateStroke(c)}" stroke-width="${c.chosen ? 3 : 1.2}" ` +
           `stroke-dasharray="${c.chosen ? "" : "3 2"}"/>`;
    });
  });
  for (let k = 0; k < 14; k++) {
    s += `<circle cx="${9 + k * 15}" cy="${n * px + 16}" r="6" fill="${k < b.coins ? "#f2c230" : "#fffdf6"}" stroke="#8a6a10"/>`;
  }
  s += `<text x="${14 * 15 + 6}" y="${n * px + 20}" font-size="11">${b.coins}</text>`;
  return {svg: s + "</svg>", filled: filled};
}

// ---- hexes (Cascadia, Dorfromantik) ---------------------------------------------------------------
function vertex(cx, cy, r, i) { const a = Math.PI / 180 * (-90 + 60 * i); return [cx + r * Math.cos(a), cy + r * Math.sin(a)]; }
function hexPath(cx, cy, r) {
  let d = "";
  for (let i = 0; i < 6; i++) { const [x, y] = vertex(cx, cy, r, i); d += (i ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1); }
  return d + "Z";
}
// corner index where edge e starts: Cascadia edges go NE,E,SE,SW,W,NW; Dorfromantik E,NE,NW,W,SW,SE
function sectorStart(e) { return D.game === "dorfromantik" ? (7 - e) % 6 : e; }
function drawHex(h, cx, cy, r, kind) {
  let s = "";
  const edges = h.slice(2, 8);
  for (let e = 0; e < 6; e++) {
    const k = sectorStart(e), [x1, y1] = vertex(cx, cy, r, k), [x2, y2] = vertex(cx, cy, r, k + 1);
    const line = kind === "dorf" && edges[e] >= 4;
    s += `<path d="M${cx.toFixed(1)} ${cy.toFixed(1)}L${x1.toFixed(1)} ${y1.toFixed(1)}L${x2.toFixed(1)} ${y2.toFixed(1)}Z" ` +
         `fill="${terrainColor(line ? 0 : edges[e])}" stroke="${terrainColor(line ? 0 : edges[e])}" stroke-width="0.5"/>`;
  }
  if (kind === "dorf") {
    for (let e = 0; e < 6; e++) {
      if (edges[e] < 4) continue;
      const k = sectorStart(e), [x1, y1] = vertex(cx, cy, r, k), [x2, y2] = vertex(cx, cy, r, k + 1);
      s += `<path d="M${cx.toFixed(1)} ${cy.toFixed(1)}L${((x1 + x2) / 2).toFixed(1)} ${((y1 + y2) / 2).toFixed(1)}" ` +
           `stroke="${terrainColor(edges[e])}" stroke-width="${edges[e] === 5 ? r * 0.34 : r * 0.22}" stroke-linecap="round"` +
           `${edges[e] === 4 ? ` stroke-dasharray="${(r * 0.12).toFixed(1)} ${(r * 0.06).toFixed(1)}"` : ""}/>`;
    }
  }
  s += `<path d="${hexPath(cx, cy, r)}" fill="none" stroke="#4a4538" stroke-width="0.8"/>`;
  if (kind === "cascadia") {
    const token = h[8], allowed = h[9], keystone = h[10];
    if (token >= 0) {
      const w = D.legend.wildlife[token];
      s += `<circle class="token" cx="${cx}" cy="${cy}" r="${r * 0.42}" fill="${w.color}" stroke="#222" stroke-width="1"/>` +
           `<text x="${cx}" y="${cy + r * 0.16}" text-anchor="middle" font-size="${r * 0.45}" font-weight="bold" ` +
           `fill="${token === 0 ? "#fff" : "#222"}">${w.letter}</text>`;
    } else {
      const kinds = [0, 1, 2, 3, 4].filter(w => allowed >> w & 1);
      if (keystone) s += `<circle cx="${cx}" cy="${cy}" r="${r * 0.36}" fill="none" stroke="#fff" stroke-width="1.6"/>`;
      kinds.forEach((w, i) => {
        const off = (i - (kinds.length - 1) / 2) * r * 0.27;
        s += `<circle cx="${(cx + off).toFixed(1)}" cy="${cy}" r="${r * 0.12}" fill="${D.legend.wildlife[w].color}" stroke="#222" stroke-width="0.6"/>`;
      });
    }
  } else {
    const target = h[8], status = h[9], flag = h[10];
    if (flag > 0) {
      s += `<path class="flag" d="M${cx - r * 0.45} ${cy + r * 0.35}V${cy - r * 0.5}L${cx - r * 0.05} ${cy - r * 0.35}L${cx - r * 0.45} ${cy - r * 0.2}" ` +
           `fill="${terrainColor(flag)}" stroke="#222" stroke-width="1"/>`;
    }
    if (target >= 0) {
      const fill = ["#ffffff", "#f2c230", "#9a9a9a"][status];
      s += `<circle class="task" cx="${cx}" cy="${cy}" r="${r * 0.36}" fill="${fill}" stroke="#222" stroke-width="1"/>` +
           `<text x="${cx}" y="${cy + r * 0.14}" text-anchor="middle" font-size="${r * 0.42}" font-weight="bold">${target}</text>`;
    }
  }
  return s;
}
function hexCentre(q, r, size) { return [size * S3 * (q + r / 2), size * 1.5 * r]; }
function drawHexBoard(step, seat, size, kind) {
  const hexes = step.boards[seat].hexes, cands = candidatesOn(step, seat).filter(c => c.where.hex);
  const pts = hexes.map(h => hexCentre(h[0], h[1], size)).concat(cands.map(c => hexCentre(c.where.hex[0], c.where.hex[1], size)));
  if (!pts.length) pts.push([0, 0]);
  const xs = pts.map(p => p[0]), ys = pts.map(p => p[1]);
  const x0 = Math.min(...xs) - size * 1.2, y0 = Math.min(...ys) - size * 1.2;
  const w = Math.max(...xs) - x0 + size * 1.2, h = Math.max(...ys) - y0 + size * 1.2;
  let s = `<svg class="board" data-seat="${seat}" width="${w.toFixed(0)}" height="${h.toFixed(0)}" viewBox="${x0.toFixed(1)} ${y0.toFixed(1)} ${w.toFixed(1)} ${h.toFixed(1)}">`;
  hexes.forEach(hx => {
    const [cx, cy] = hexCentre(hx[0], hx[1], size);
    s += `<g class="tile" data-q="${hx[0]}" data-r="${hx[1]}">${drawHex(hx, cx, cy, size * 0.98, kind)}</g>`;
  });
  cands.slice().reverse().forEach(c => {
    const [cx, cy] = hexCentre(c.where.hex[0], c.where.hex[1], size);
    // the move played, drawn as a ghost (faint tile, hollow dashed token) so it is never taken for a piece
    if (c.chosen && c.where.preview) s += `<g class="preview ghost" opacity="0.35">${drawHex(c.where.preview, cx, cy, size * 0.98, kind)}</g>`;
    if (c.chosen && c.where.token >= 0) {
      const w = D.legend.wildlife[c.where.token], at = c.where.token_hex || c.where.hex;
      const [tx, ty] = hexCentre(at[0], at[1], size);
      s += `<circle class="preview ghost token-ghost" cx="${tx}" cy="${ty}" r="${size * 0.42}" fill="none" stroke="${w.color}" ` +
           `stroke-width="2.5" stroke-dasharray="4 3"/>` +
           `<text class="preview ghost" x="${tx}" y="${ty + size * 0.16}" text-anchor="middle" font-size="${size * 0.45}" ` +
           `font-weight="bold" fill="${w.color}" fill-opacity="0.8">${w.letter}</text>`;
    }
    s += `<path class="candidate${c.chosen ? " chosen" : ""}" d="${hexPath(cx, cy, size * 0.86)}" fill="${c.chosen ? "#ff1f6b33" : "none"}" ` +
         `stroke="${c.chosen ? "#ff1f6b" : "#333"}" stroke-width="${c.chosen ? 3 : 1.3}" stroke-dasharray="${c.chosen ? "" : "4 3"}"/>`;
  });
  return {svg: s + "</svg>", filled: hexes.length};
}
function drawLoose(h, size, kind, highlight) {
  const w = size * 2.3;
  let s = `<svg width="${w.toFixed(0)}" height="${w.toFixed(0)}" viewBox="${-w / 2} ${-w / 2} ${w} ${w}">`;
  if (h) s += drawHex(h, 0, 0, size, kind);
  if (highlight) s += `<path d="${hexPath(0, 0, size * 1.08)}" fill="none" stroke="#ff1f6b" stroke-width="3"/>`;
  return s + "</svg>";
}

// ---- panels -------------------------------------------------------------------------------------
function scoreTable(step) {
  const keys = D.chart_keys.concat(["total"]);
  let s = "<table><tr><th>score</th>" + D.agents.map((a, i) => `<th>${D.seat_names[i]}</th>`).join("") + "</tr>";
  keys.forEach(k => {
    s += `<tr class="${k === "total" ? "total" : ""}"><td>${esc(k.replace(/_/g, " "))}</td>` +
         step.scores.map((sc, i) => `<td class="score" data-seat="${i}" data-key="${k}">${sc[k]}</td>`).join("") + "</tr>";
  });
  return s + "</table>";
}
function decisionPanel(step) {
  if (step.seat < 0) return `<div class="move">game over</div><div>final totals: ${step.scores.map(s => s.total).join(", ")}</div>`;
  let s = `<div>decision ${current} of ${N}: <b>${D.seat_names[step.seat]}</b> (${esc(D.agents[step.seat])}) plays</div>` +
          `<div class="move" id="move">${esc(step.move)}</div>`;
  if (step.explained) {
    const stats = Array.from(new Set(step.candidates.flatMap(c => Object.keys(c.stats))));
    s += `<div class="muted">${esc(step.explained)}</div><table id="candidates"><tr><th>#</th><th>candidate</th>` +
         stats.map(k => `<th>${esc(k)}</th>`).join("") + "</tr>";
    step.candidates.forEach((c, i) => {
      s += `<tr class="${c.chosen ? "chosen" : ""}" data-action="${c.action}"><td>${i + 1}${c.chosen ? " &#9733;" : ""}</td>` +
           `<td>${esc(c.label)}</td>` + stats.map(k => `<td>${c.stats[k] === undefined ? "" : esc(c.stats[k])}</td>`).join("") + "</tr>";
    });
    s += "</table>";
  } else {
    s += `<div class="muted">this agent gives no view of its choice</div>`;
  }
  return s;
}
function extraPanel(step) {
  if (D.game === "cascadia") {
    const picked = new Set(), chosenSlots = new Set();
    step.candidates.forEach(c => { if (c.where && c.where.market) c.where.market.forEach(m => { picked.add(m); if (c.chosen) chosenSlots.add(m); }); });
    let s = `<div>market</div><div class="market">`;
    step.market.forEach((h, i) => { s += `<div title="slot ${i}">${drawLoose(h, 20, "cascadia", chosenSlots.has(i))}<div class="muted" style="text-align:center">${i}</div></div>`; });
    s += "</div>";
    if (step.hand || step.hand_token >= 0) s += "<div>in hand</div>";
    if (step.hand) s += drawLoose(step.hand, 20, "cascadia", false);
    if (step.hand_token >= 0) {
      const w = D.legend.wildlife[step.hand_token];
      s += `<svg width="40" height="46"><circle cx="20" cy="23" r="11" fill="${w.color}" stroke="#222"/>` +
           `<text x="20" y="27" text-anchor="middle" font-size="11" font-weight="bold" fill="${step.hand_token === 0 ? "#fff" : "#222"}">${w.letter}</text></svg>`;
    }
    return s;
  }
  if (D.game === "dorfromantik" && step.hand) return `<div>drawn tile</div>${drawLoose(step.hand, 26, "dorf", false)}`;
  return "";
}
// a category named like a terrain or animal of the legend takes its colour
function chartColor(key, j) {
  if (key === "total") return "#000";
  const named = (D.legend.wildlife || []).concat(D.legend.terrains).find(t => t.name === key || t.name + "s" === key || key.endsWith("_" + t.name));
  return named ? named.color : CHART_COLORS[j % CHART_COLORS.length];
}
function drawChart() {
  const svg = el("chart"), W = 360, H = 170, L = 30, B = 18;
  const keys = D.chart_keys.concat(["total"]);
  const series = keys.map(k => D.steps.map(st => st.scores[chartSeat][k]));
  const lo = Math.min(0, ...series.flat()), hi = Math.max(1, ...series.flat());
  const X = i => L + (W - L - 6) * i / Math.max(1, N), Y = v => (H - B) - (H - B - 6) * (v - lo) / (hi - lo);
  let s = `<line x1="${L}" y1="${Y(0)}" x2="${W}" y2="${Y(0)}" stroke="#bbb"/>` +
          `<text x="2" y="12" font-size="10">${hi}</text><text x="2" y="${H - B}" font-size="10">${lo}</text>` +
          `<text x="${L}" y="${H - 4}" font-size="10">decision 0</text><text x="${W - 4}" y="${H - 4}" font-size="10" text-anchor="end">${N}</text>`;
  series.forEach((vals, j) => {
    const pts = vals.map((v, i) => `${X(i).toFixed(1)},${Y(v).toFixed(1)}`).join(" ");
    const color = chartColor(keys[j], j);
    s += `<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="${keys[j] === "total" ? 2 : 1.3}"/>`;
  });
  s += `<line id="cursor" x1="${X(current)}" y1="4" x2="${X(current)}" y2="${H - B}" stroke="#ff1f6b" stroke-width="1.5"/>`;
  svg.innerHTML = s;
  el("chart-legend").innerHTML = keys.map((k, j) => `<span class="legend-item"><span class="swatch" style="background:` +
    `${chartColor(k, j)}"></span>${esc(k.replace(/_/g, " "))}</span>`).join("");
}
function legendPanel() {
  let s = "<div>legend</div>" + D.legend.terrains.map(t =>
    `<span class="legend-item"><span class="swatch" style="background:${t.color}"></span>${esc(t.name)}</span>`).join("");
  if (D.legend.wildlife) s += "<br>" + D.legend.wildlife.map(w =>
    `<span class="legend-item"><svg width="14" height="14"><circle cx="7" cy="7" r="6" fill="${w.color}" stroke="#222"/></svg>${esc(w.name)} (${w.letter})</span>`).join("");
  s += "<br>" + D.legend.symbols.map(([k, text]) => `<span class="legend-item"><b>${esc(k)}</b>: ${esc(text)}</span>`).join("");
  return s;
}

// ---- stepping -----------------------------------------------------------------------------------
function show(k) {
  current = Math.max(0, Math.min(N, k | 0));
  const step = D.steps[current];
  el("viewer").dataset.step = current;
  el("slider").value = current;
  el("counter").textContent = `decision ${current} / ${N} (${step.stage})`;
  el("jump").value = String(D.stages.filter(s => s.step <= current).pop().step);
  el("info").innerHTML = step.info.map(line => `<div>${esc(line)}</div>`).join("");
  let boards = "";
  const seats = D.game === "dorfromantik" ? [0] : D.agents.map((_, i) => i);
  seats.forEach(seat => {
    const drawn = D.static.kind === "grid" ? drawGrid(step, seat)
      : drawHexBoard(step, seat, D.game === "cascadia" ? 22 : 24, D.game === "cascadia" ? "cascadia" : "dorf");
    const acting = step.seat === seat || (step.candidates[0] && step.candidates[0].where && step.candidates[0].where.board === seat);
    const extra = step.boards[seat].nature !== undefined ? `, nature tokens ${step.boards[seat].nature}` : "";
    const who = D.game === "dorfromantik" ? "shared landscape" : D.seat_names[seat];
    const agent = D.game === "dorfromantik" ? D.specs.join(", ") : D.specs[seat];
    boards += `<div class="seat${acting ? " acting" : ""}" data-seat="${seat}" data-filled="${drawn.filled}">` +
              `<h3>${who} &mdash; total <span class="seat-total">${step.scores[seat].total}</span>${extra}</h3>` +
              `<div class="agent" title="${esc(agent)}">${esc(agent)}</div>${drawn.svg}</div>`;
  });
  el("boards").innerHTML = boards;
  el("table").innerHTML = scoreTable(step);
  el("decision").innerHTML = decisionPanel(step);
  el("table-extra").innerHTML = extraPanel(step);
  el("table-extra").style.display = el("table-extra").innerHTML ? "" : "none";
  drawChart();
  if (history.replaceState) history.replaceState(null, "", "#step=" + current);
}
function start() {
  el("title").textContent = D.title;
  el("slider").max = N;
  el("jump").innerHTML = D.stages.map(s => `<option value="${s.step}">${esc(s.label)} (decision ${s.step})</option>`).join("");
  el("chart-seat").innerHTML = D.seat_names.map((n, i) => `<option value="${i}">${esc(n)}</option>`).join("");
  el("legend").innerHTML = legendPanel();
  el("first").onclick = () => show(0);
  el("prev").onclick = () => show(current - 1);
  el("next").onclick = () => show(current + 1);
  el("last").onclick = () => show(N);
  el("slider").oninput = e => show(+e.target.value);
  el("jump").onchange = e => show(+e.target.value);
  el("chart-seat").onchange = e => { chartSeat = +e.target.value; drawChart(); };
  document.addEventListener("keydown", e => {
    if (e.target.tagName === "SELECT") return;
    const moves = {ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10};
    if (e.key in moves) { show(current + moves[e.key]); e.preventDefault(); }
    if (e.key === "Home") show(0);
    if (e.key === "End") show(N);
  });
  const m = /step=(\d+)/.exec(location.hash + "&" + location.search);
  show(m ? +m[1] : 0);
}
start();
