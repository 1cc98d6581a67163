"use strict";
// The page of `c4engine gui`. The server holds the game and the engine; this page
// shows what the server says (state, info lines, errors) and sends requests.
(() => {
  // The board's shape comes with every state from the server; 7x6 until the first.
  let WIDTH = 7, HEIGHT = 6, CONNECT = 4;
  const SYMBOLS = ["", "✕", "◯"];
  const NAMES = ["", "first player (✕)", "second player (◯)"];
  const $ = (id) => document.getElementById(id);

  let ws = null;
  let state = null;
  let analysis = {};        // column -> {text, depth} for the state's version
  let thinking = "";        // the last line of the engine's own move search, in words
  let lastMoveWords = "";   // that line's score, kept for the move it chose
  let bestLine = null;      // the analysis' multipv 1: {column, score, proven}
  let review = null;        // the review the server sent last (c4engine review --json's form)
  let pgnText = "";         // the PGN whose game list is shown
  const SVG = "http://www.w3.org/2000/svg";
  const MARK_NAGS = {kept: "", slower: "?!", mistake: "?", blunder: "??"};
  const cells = [];         // cells[row][col], row 0 at the top

  // ---------------------------------------------------------------- building
  // The grid of cells and the row of column scores, for a board of WIDTH x HEIGHT.
  function buildBoard() {
    const board = $("board");
    board.innerHTML = "";
    cells.length = 0;
    board.style.gridTemplateColumns = `repeat(${WIDTH}, 1fr)`;
    board.style.aspectRatio = `${WIDTH} / ${HEIGHT}`;
    document.documentElement.style.setProperty("--columns", String(WIDTH));  // the board and its scores row
    board.setAttribute("aria-label", `board of ${WIDTH} columns and ${HEIGHT} rows, ${CONNECT} in a row wins: `
      + `press 1-${Math.min(WIDTH, 9)} to play a column`);
    for (let row = 0; row < HEIGHT; row++) {
      cells.push([]);
      for (let col = 1; col <= WIDTH; col++) {
        const cell = document.createElement("button");
        cell.type = "button";
        cell.className = "cell";
        cell.dataset.col = col;
        cell.dataset.row = HEIGHT - row;
        cell.dataset.owner = "0";
        cell.setAttribute("aria-label", `column ${col}`);
        cell.addEventListener("click", () => request({op: "move", column: col}));
        const stone = document.createElement("span");
        stone.className = "stone";
        cell.appendChild(stone);
        board.appendChild(cell);
        cells[row].push(cell);
      }
    }
    const scores = $("scores");
    scores.innerHTML = "";
    scores.style.gridTemplateColumns = `repeat(${WIDTH}, 1fr)`;
    for (let col = 1; col <= WIDTH; col++) {
      const s = document.createElement("div");
      s.className = "score";
      s.dataset.col = col;
      scores.appendChild(s);
    }
  }

  function build() {
    buildBoard();
    $("board-apply").onclick = () => request({op: "board", board: chosenBoard()});
    $("undo").onclick = () => request({op: "undo"});
    $("redo").onclick = () => request({op: "redo"});
    $("new").onclick = () => request({op: "new"});
    $("hint-button").onclick = () => request({op: "hint"});
    $("restart").onclick = () => request({op: "restart"});
    $("setup").onclick = () => request({op: "set", text: $("setup-text").value});
    $("setup-text").addEventListener("keydown", (e) => { if (e.key === "Enter") $("setup").click(); });
    $("mode").onchange = () => request({op: "settings", mode: $("mode").value});
    $("level").oninput = () => { $("level-out").textContent = $("level").value; };
    $("level").onchange = () => request({op: "settings", level: Number($("level").value)});
    $("movetime").onchange = () => request({op: "settings", movetime: Number($("movetime").value)});
    $("analysis").onchange = () => request({op: "settings", analysis: $("analysis").checked});
    // Animation: the user's choice, else off when the system asks for reduced motion.
    const chosen = localStorage.getItem("c4-animate");
    $("animate").checked = chosen ? chosen !== "off" : !matchMedia("(prefers-reduced-motion: reduce)").matches;
    $("animate").onchange = () => localStorage.setItem("c4-animate", $("animate").checked ? "on" : "off");
    $("copy-digits").onclick = () => copy($("digits").textContent);
    $("copy-fen").onclick = () => copy($("fen").textContent);
    $("copy-pgn").onclick = () => copy(state ? state.pgn : "");
    $("review-played").onclick = () => request({op: "review", played: true});
    $("review-pgn").onclick = () => { pgnText = $("pgn-text").value; request({op: "review", pgn: pgnText}); };
    $("pick-game").onchange = () => request({op: "review", pgn: pgnText, game: Number($("pick-game").value)});
    $("pgn-file").onchange = () => {
      const file = $("pgn-file").files[0];
      if (file) file.text().then((text) => { $("pgn-text").value = text; $("review-pgn").click(); });
    };
    document.addEventListener("keydown", (e) => {
      const typing = ["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName)
        && document.activeElement.type !== "checkbox" && document.activeElement.type !== "range";
      if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
      if (/^[1-9]$/.test(e.key) && Number(e.key) <= WIDTH) request({op: "move", column: Number(e.key)});
      const step = {ArrowLeft: -1, ArrowRight: 1}[e.key];
      if (step && state) {
        e.preventDefault();
        goto({step});
      }
    });
  }

  // The board the chooser shows, as the server reads it: 8x7, or 9x6k5 for five in a row.
  function chosenBoard() {
    const connect = $("board-connect").value;
    return `${$("board-width").value}x${$("board-height").value}` + (connect === "4" ? "" : `k${connect}`);
  }

  function showBoardChoice(shape) {
    for (const [id, value] of [["board-width", shape.width], ["board-height", shape.height],
                               ["board-connect", shape.connect]]) {
      if (document.activeElement !== $(id)) $(id).value = String(value);
    }
  }

  // Show the game after {ply} moves, or {step}: a move back (-1) or on (1), counted
  // by the server, so that keys pressed before its answer are all taken.
  function goto(where) {
    if (state && state.mode !== "humans") request({op: "settings", mode: "humans"});
    request({op: "goto", ...where});
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(() => say(`copied: ${text}`), () => showError("could not copy"));
    } else {
      showError("the browser does not allow copying here: select the text instead");
    }
  }

  // ---------------------------------------------------------------- talking
  function connect() {
    ws = new WebSocket(`ws://${location.host}/ws`);
    ws.onopen = resume;
    ws.onmessage = (event) => receive(JSON.parse(event.data));
    ws.onclose = () => {
      say("Disconnected from the c4engine server: restart `c4engine gui` and reload the page.");
      document.body.classList.add("offline");
    };
  }

  // A reload opens a new session: the tab's last board, position and settings carry over.
  // A link with ?pos=4453 (or ?fen=...) opens that position, over the tab's last one,
  // on the board its ?board=8x7 names (7x6 without one).
  function resume() {
    const saved = JSON.parse(sessionStorage.getItem("c4-game") || "null");
    const params = new URLSearchParams(location.search);
    const linked = params.get("pos") ?? params.get("fen");
    if (saved) {
      request({op: "settings", mode: saved.mode, level: saved.level, movetime: saved.movetime,
               analysis: saved.analysis});
    }
    const board = params.get("board") ?? (linked !== null ? "7x6" : saved && saved.board);
    if (board && board !== "7x6") request({op: "board", board});
    const position = linked !== null ? linked : saved && saved.position;
    if (position) request({op: "set", text: position});
  }

  function showInAddress(s) {
    const board = s.shape.name === "7x6" ? "" : `board=${s.shape.name}&`;
    const query = s.digits !== null ? `?${board}pos=${s.digits}` : `?${board}fen=${encodeURIComponent(s.fen)}`;
    if (location.search !== query) history.replaceState(null, "", query);
  }

  function remember(s) {
    sessionStorage.setItem("c4-game", JSON.stringify({
      board: s.shape.name, position: s.digits !== null ? s.digits : s.fen, mode: s.mode, level: s.level,
      movetime: s.movetime, analysis: s.analysis}));
  }

  function request(message) {
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      showError("not connected to the c4engine server");
      return;
    }
    ws.send(JSON.stringify(message));
  }

  function receive(message) {
    if (message.type === "state") {
      if (!state || state.version !== message.version) {
        lastMoveWords = state && message.last_engine_move ? thinking : "";
        analysis = {};
        thinking = "";
        clearError();
      }
      const shape = message.shape;
      if (shape.width !== WIDTH || shape.height !== HEIGHT || shape.connect !== CONNECT) {
        [WIDTH, HEIGHT, CONNECT] = [shape.width, shape.height, shape.connect];
        buildBoard();
      }
      showBoardChoice(shape);
      const previous = state;
      state = message;
      if (!state.analysis || (previous && previous.version !== state.version)) bestLine = null;
      render(previous);
      remember(state);
      showInAddress(state);
    } else if (message.type === "info") {
      info(message);
    } else if (message.type === "review") {
      review = message.review;
      $("pick-game-label").hidden = true;
      renderReview();
    } else if (message.type === "review_games") {
      pickGame(message.games);
    } else if (message.type === "error") {
      showError(message.message);
    } else if (message.type === "engine_says" && message.text.startsWith("error")) {
      showError(`engine: ${message.text}`);
    }
  }

  // ---------------------------------------------------------------- info lines
  function emptyCells() {
    const cellCount = WIDTH * HEIGHT;
    return state ? cellCount - state.board.flat().filter((v) => v !== 0).length : cellCount;
  }

  function scoreWords(score, depth) {
    if (!score) return "";
    if (score.kind === "mate") {
      const n = Math.abs(score.value), atMost = score.bound ? "≤" : "";
      return score.value > 0 ? `wins in ${atMost}${n}` : `loses in ${atMost}${n}`;
    }
    if (score.value === 0 && depth >= emptyCells()) return "draw";
    return (score.value > 0 ? "+" : "") + score.value;
  }

  // The server has read the line (score, depth, multipv, pv as columns 1-W).
  function info(message) {
    if (!state || message.version !== state.version) return;
    const words = scoreWords(message.score, message.depth);
    if (message.kind === "analysis") {
      const proven = (message.score.kind === "mate" && !message.score.bound) || words === "draw";
      analysis[message.pv[0]] = {text: words, depth: message.depth, proven};
      if (message.multipv === 1) bestLine = {column: message.pv[0], score: message.score, words, proven};
      renderScores();
    } else if (message.kind === "move" && message.multipv === 1) {
      thinking = `${words} (depth ${message.depth})`;
      $("engine-line").textContent = `Engine thinking: ${thinking}`;
    }
  }

  // ---------------------------------------------------------------- drawing
  function render(previous) {
    const s = state;
    const grew = previous && previous.moves.length + 1 === s.moves.length
      && previous.moves.every((m, i) => m === s.moves[i]) && previous.fen !== s.fen;
    const last = s.moves.length ? lastCell(s) : null;
    const wins = new Set(s.winning_cells.map(([c, r]) => `${c},${r}`));
    for (let row = 0; row < HEIGHT; row++) {
      for (let col = 1; col <= WIDTH; col++) {
        const cell = cells[row][col - 1], owner = s.board[row][col - 1], rowFromBottom = HEIGHT - row;
        const stone = cell.firstChild;
        cell.dataset.owner = String(owner);
        stone.className = "stone" + (owner ? ` p${owner}` : "");
        stone.textContent = SYMBOLS[owner];
        cell.classList.toggle("win", wins.has(`${col},${rowFromBottom}`));
        cell.classList.toggle("last", !!last && last[0] === col && last[1] === rowFromBottom);
        cell.classList.toggle("hinted", s.hint === col);
        cell.setAttribute("aria-label", `column ${col}, row ${rowFromBottom}: ${owner ? NAMES[owner] : "empty"}`);
        if (grew && last && last[0] === col && last[1] === rowFromBottom && $("animate").checked) {
          stone.style.setProperty("--fall", String(row + 1));
          stone.classList.add("drop");
        }
      }
    }
    document.body.classList.toggle("no-animation", !$("animate").checked);
    $("status").textContent = statusText(s);
    renderBanner(s.engine);
    renderScores();
    const hint = $("hint");
    hint.hidden = s.hint === null && !s.hint_pending;
    hint.textContent = s.hint !== null ? `Hint: play column ${s.hint}` : "Hint: the engine is looking…";
    if (s.last_engine_move) {
      const m = s.last_engine_move;
      $("engine-line").textContent = `Engine played ${m.column} in ${(m.ms / 1000).toFixed(1)} s`
        + (lastMoveWords ? `: ${lastMoveWords}` : "");
    } else if (!s.thinking || s.thinking !== "move") {
      $("engine-line").textContent = "";
    }
    $("undo").disabled = !s.can_undo;
    $("redo").disabled = !s.can_redo;
    $("hint-button").disabled = s.result !== null || s.engine.status !== "ready";
    renderReview();
    $("digits").textContent = s.digits === null ? "(set from a FEN)" : (s.digits || "(start)");
    $("copy-digits").disabled = s.digits === null;
    $("fen").textContent = s.fen;
    if (document.activeElement !== $("mode")) $("mode").value = s.mode;
    if (document.activeElement !== $("level")) { $("level").value = s.level; $("level-out").textContent = s.level; }
    if (document.activeElement !== $("movetime")) selectMovetime(s.movetime);
    $("analysis").checked = s.analysis;
    $("analysis-source").textContent = s.service ? ` from ${s.service}` : "";
    document.body.classList.toggle("analysing", s.analysis);
  }

  function selectMovetime(ms) {
    const select = $("movetime");
    if (![...select.options].some((o) => Number(o.value) === ms)) {
      const o = document.createElement("option");
      o.value = ms; o.textContent = `${ms / 1000} s`;
      select.appendChild(o);
    }
    select.value = String(ms);
  }

  function lastCell(s) {
    const col = s.moves[s.moves.length - 1];
    let height = 0;
    for (let row = 0; row < HEIGHT; row++) if (s.board[row][col - 1]) height++;
    return [col, height];
  }

  function statusText(s) {
    const who = (side) => side === "first" ? NAMES[1] : NAMES[2];
    const engineSide = s.mode === "first" ? "second" : s.mode === "second" ? "first" : null;
    if (s.result === "draw") return "Draw: the board is full.";
    if (s.result) {
      if (engineSide === null) return `The ${who(s.result)} wins.`;
      return s.result === engineSide ? "The engine wins." : "You win!";
    }
    if (s.engine.status === "starting") return "The engine is starting…";
    if (s.engine_turn) return s.engine.status === "ready" ? "The engine is thinking…" : "The engine's turn: restart it to go on.";
    if (engineSide === null) return `${who(s.to_move)[0].toUpperCase()}${who(s.to_move).slice(1)} to move.`;
    return `Your move (${who(s.to_move)}): click a column or press 1-${Math.min(WIDTH, 9)}.`;
  }

  function renderBanner(engine) {
    const broken = engine.status === "dead" || engine.status === "hung";
    $("banner").hidden = !broken;
    if (broken) {
      const what = engine.status === "hung" ? "The engine stopped answering" : "The engine stopped";
      $("banner-text").textContent = `${what}: ${engine.detail}. The game is kept.`;
    }
  }

  // The verdict on the move about to be played here, when the review has it.
  function reviewHere() {
    const ply = reviewPly();
    return ply !== null && review.moves[ply] ? review.moves[ply] : null;
  }

  // How far the board is into the reviewed game, or null when it shows another game.
  function reviewPly() {
    if (!review || !state || state.review_serial !== review.serial) return null;
    const line = review.columns;
    if (state.moves.length > line.length || !state.moves.every((m, i) => m === line[i])) return null;
    return state.moves.length;
  }

  function renderScores() {
    const s = state;
    const here = reviewHere();
    const best = here ? here.best : bestLine && bestLine.proven ? [bestLine.column] : [];
    for (const el of $("scores").children) {
      const col = Number(el.dataset.col);
      const a = here ? {text: here.columns[col] ? here.columns[col].words : "–", proven: true} : analysis[col];
      const shown = here || s.analysis;
      const text = !shown ? "" : !s.playable.includes(col) ? "–" : a ? a.text : "…";
      el.textContent = text === "unproven" ? "?" : text;  // a narrow column has no room for the word
      el.classList.toggle("proven", !!a && a.proven);
      el.classList.toggle("best", shown && best.includes(col));
      el.title = text === "unproven" ? "unproven" : a && a.depth !== undefined ? `depth ${a.depth}` : "";
    }
    renderPositionScore(here);
  }

  // The position's score in words, from the side to move and from the first player.
  function renderPositionScore(here) {
    const s = state, box = $("position-score");
    let words = null;
    if (here) words = here.before.words;
    else if (s.analysis && bestLine && bestLine.proven) words = bestLine.words;
    box.textContent = "";
    if (!words || s.result) return;
    const mover = s.to_move === "first" ? NAMES[1] : NAMES[2];
    const main = document.createElement("span");
    main.textContent = `${mover[0].toUpperCase()}${mover.slice(1)} to move: ${words}`;
    const first = document.createElement("span");
    first.className = "first-view";
    first.textContent = `From the first player's (✕) side: ${s.to_move === "first" ? words : flipWords(words)}`;
    box.append(main, first);
  }

  function flipWords(words) {
    const swap = {wins: "loses", loses: "wins", better: "worse", worse: "better"};
    return words.replace(/\b(wins|loses|better|worse)\b/g, (w) => swap[w]);
  }

  function renderMoves(s) {
    const list = $("moves");
    list.innerHTML = "";
    const line = reviewPly() !== null ? review.columns : s.moves;
    const firstIsSecond = s.first_mover === "second";
    const plies = firstIsSecond ? [null, ...line] : line;
    for (let i = 0; i < plies.length; i += 2) {
      const li = document.createElement("li");
      li.append(`${i / 2 + 1}. `);
      for (const j of [i, i + 1]) {
        if (j >= plies.length) break;
        if (plies[j] === null) { li.append("… "); continue; }
        const ply = firstIsSecond ? j - 1 : j;
        li.append(moveButton(ply, plies[j], j % 2 === (firstIsSecond ? 1 : 0) ? "✕" : "◯"), " ");
      }
      list.appendChild(li);
    }
  }

  function moveButton(ply, column, symbol) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "move";
    b.dataset.ply = String(ply + 1);
    const verdict = reviewPly() !== null && review.moves[ply];
    b.textContent = `${symbol}${column}${verdict ? MARK_NAGS[verdict.mark] ?? "" : ""}`;
    if (verdict && verdict.mark && verdict.mark !== "kept") {
      b.dataset.mark = verdict.mark;
      const best = document.createElement("span");
      best.className = "best";
      best.textContent = verdict.best.length ? ` (${verdict.mark}; best ${verdict.best.join(" or ")})` : ` (${verdict.mark})`;
      b.appendChild(best);
    }
    b.classList.toggle("current", state.moves.length === ply + 1);
    b.onclick = () => goto({ply: ply + 1});
    return b;
  }

  // ---------------------------------------------------------------- review
  function pickGame(games) {
    const select = $("pick-game");
    select.innerHTML = "";
    const prompt = document.createElement("option");
    prompt.textContent = `${games.length} games: pick one`;
    prompt.disabled = true; prompt.selected = true;
    select.appendChild(prompt);
    for (const g of games) {
      const o = document.createElement("option");
      o.value = g.number; o.textContent = g.title; o.disabled = !g.ok;
      select.appendChild(o);
    }
    $("pick-game-label").hidden = false;
  }

  function renderReview() {
    if (!state) return;
    renderMoves(state);
    renderScores();
    const ply = reviewPly();
    $("chart-box").hidden = !review;
    if (!review) return;
    const names = `${review.white} - ${review.black}`;
    $("review-status").textContent = review.done
      ? `Review of ${names}: done.` + (ply === null ? " The board has left the reviewed game." : "")
      : `Reviewing ${names}: ${review.moves.length} of ${review.total} moves…`;
    const summary = (who, s) => `${who}: ${s.moves} moves, ${s.kept} kept, ${s.slower} slower, `
      + `${s.mistakes} mistakes, ${s.blunders} blunders` + (s.unproven ? `, ${s.unproven} unproven` : "")
      + (s.accuracy === null ? "" : `, accuracy ${(100 * s.accuracy).toFixed(0)}%`);
    $("review-summary").textContent = `${summary("✕ " + review.white, review.summary.first)}. `
      + `${summary("◯ " + review.black, review.summary.second)}.`;
    drawChart(ply);
  }

  function svg(name, attributes, parent) {
    const el = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attributes)) el.setAttribute(k, v);
    parent.appendChild(el);
    return el;
  }

  // Pons scores from the first player's side after each move; the draw line at 0.
  function drawChart(current) {
    const chart = $("chart"), W = 600, H = 220, pad = 24;
    chart.innerHTML = "";
    const x = (ply) => pad + ply * (W - 2 * pad) / Math.max(review.total, 1);
    const y = (score) => H / 2 - score / review.scale * (H / 2 - pad);
    svg("line", {class: "zero", x1: pad, x2: W - pad, y1: y(0), y2: y(0)}, chart);
    svg("text", {class: "label", x: 2, y: y(0) - 4}, chart).textContent = "draw";
    svg("text", {class: "label", x: 2, y: 14}, chart).textContent = "✕ wins";
    svg("text", {class: "label", x: 2, y: H - 4}, chart).textContent = "◯ wins";
    if (current !== null) svg("line", {class: "cursor", x1: x(current), x2: x(current), y1: pad / 2, y2: H - pad / 2}, chart);
    const exact = review.chart.map((v, i) => [i + 1, v]).filter(([, v]) => v.low === v.high);
    svg("polyline", {class: "curve", points: exact.map(([p, v]) => `${x(p)},${y(v.low)}`).join(" ")}, chart);
    review.chart.forEach((v, i) => {
      const verdict = review.moves[i], ply = i + 1;
      const mid = (v.low + v.high) / 2;
      if (v.low !== v.high) svg("line", {class: "range", x1: x(ply), x2: x(ply), y1: y(v.low), y2: y(v.high)}, chart);
      const point = svg("circle", {class: `point ${verdict.mark || "unproven"}${v.low === v.high ? "" : " bound"}`
        + (current === ply ? " current" : ""), cx: x(ply), cy: y(mid), r: 6, "data-ply": ply}, chart);
      svg("title", {}, point).textContent = `move ${ply}: ${verdict.column}${verdict.nag} ${verdict.after.words}`
        + ` (${verdict.mark || "unproven"})`;
      point.addEventListener("click", () => goto({ply}));
      if (verdict.nag) svg("text", {class: "nag", x: x(ply), y: y(mid) - 10}, chart).textContent = verdict.nag;
    });
  }

  // ---------------------------------------------------------------- messages
  let errorTimer = null;
  function showError(text) {
    const el = $("error");
    el.textContent = text;
    el.hidden = false;
    clearTimeout(errorTimer);
    errorTimer = setTimeout(clearError, 10000);
  }
  function clearError() { $("error").hidden = true; $("error").textContent = ""; }
  function say(text) { $("status").textContent = text; }

  build();
  connect();
})();
