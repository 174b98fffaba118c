/* basepress: the site's script. Search, copy buttons, tabs, the theme
   button, the menu on narrow screens, a language switcher that keeps the
   reader's section, and the version picker. No dependencies, no request to any other host; the page
   works without it. */
(function () {
  "use strict";

  var body = document.body;
  document.documentElement.classList.add("js");

  /* A polite live region, for what the script does out of sight. */
  var announcer = document.createElement("p");
  announcer.className = "visually-hidden";
  announcer.setAttribute("role", "status");
  body.appendChild(announcer);
  function announce(text) {
    announcer.textContent = "";
    window.setTimeout(function () { announcer.textContent = text; }, 50);
  }

  /* ---- Copy buttons ------------------------------------------------- */

  function legacyCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing more to try */ }
    body.removeChild(area);
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { legacyCopy(text); });
    }
    legacyCopy(text);
    return Promise.resolve();
  }

  function addCopyButtons() {
    var label = body.getAttribute("data-copy") || "";
    var done = body.getAttribute("data-copied") || "";
    document.querySelectorAll("pre.code").forEach(function (pre) {
      var code = pre.querySelector("code") || pre;
      var wrap = document.createElement("div");
      wrap.className = "code-block";
      pre.parentNode.insertBefore(wrap, pre);
      wrap.appendChild(pre);
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy";
      button.textContent = label;
      button.addEventListener("click", function () {
        /* Exactly the code: the text of <code>, without the markup. */
        var text = code.textContent;
        button.setAttribute("data-copied", text);
        copyText(text).then(function () {
          button.textContent = done;
          button.classList.add("done");
          announce(done);
          window.setTimeout(function () {
            button.textContent = label;
            button.classList.remove("done");
          }, 2000);
        });
      });
      wrap.appendChild(button);
    });
  }

  /* ---- Search -------------------------------------------------------- */

  /* The search reads the index of the page's docs version and language
     (the form's data-bundle, `/search/1.29/`, and the language:
     `/search/1.29/es/`) that render/search.rs writes: index.json first,
     then only the shards of the words a query has and, for the results
     shown, their pages' text. Text is folded and cut into words exactly
     as there; a query word finds the words of its stem (looked up among
     the indexed words, or the longest indexed stem it starts with) and
     every stem that starts with that one, and the last word of a query
     also finds the words it begins. */

  var PAGE = 10;
  var JOINED_MAX = 64;

  /* Text folded as the index was: each character the bundle's `fold`
     names (those the index folds otherwise than this, such as "ß" to
     "ss") as it says, then accents and case removed. */
  function foldText(s, fold) {
    if (fold && /[^\x00-\x7f]/.test(s)) {
      s = Array.from(s).map(function (c) {
        var f = fold[c];
        if (f === undefined) { f = fold[c.toLowerCase()]; }
        return f === undefined ? c : f;
      }).join("");
    }
    return s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  }
  function isAlnum(c) { return (c >= 48 && c <= 57) || (c >= 97 && c <= 122); }
  function isJoiner(c) { return c === 46 || c === 95 || c === 45; }

  /* Calls word(w) for each run of letters and digits of folded text and
     group(g) for runs joined by ".", "_" or "-", as render/search.rs. */
  function scan(s, word, group) {
    var n = s.length;
    var i = 0;
    while (i < n) {
      while (i < n && !isAlnum(s.charCodeAt(i))) { i++; }
      var start = i;
      var run = i;
      var joined = false;
      while (i < n) {
        var c = s.charCodeAt(i);
        if (isAlnum(c)) {
          i++;
        } else if (isJoiner(c) && i + 1 < n && isAlnum(s.charCodeAt(i + 1))) {
          word(s.slice(run, i));
          joined = true;
          i++;
          run = i;
        } else {
          break;
        }
      }
      if (run < i) { word(s.slice(run, i)); }
      if (joined && i - start <= JOINED_MAX) { group(s.slice(start, i)); }
    }
  }
  function usable(w) { return w.length >= 2 && w.length <= 32; }

  /* Everything of folded text the index may hold: words and groups. */
  function pieces(s) {
    var out = [];
    scan(s, function (w) { if (usable(w)) { out.push(w); } }, function (g) {
      out.push(g);
      if (g.charAt(0) === "v" && /[0-9]/.test(g.charAt(1))) { out.push(g.slice(1)); }
    });
    return out;
  }

  /* A query's terms, in the order typed: each group whole (a key, a
     version), each other word alone, stop words left out. */
  function queryTerms(s, stop) {
    var out = [];
    (s.match(/[a-z0-9]+(?:[._-][a-z0-9]+)*/g) || []).forEach(function (m) {
      var parts = /[._-]/.test(m) && m.length > JOINED_MAX ? m.split(/[._-]/) : [m];
      parts.forEach(function (w) {
        var joined = /[._-]/.test(w);
        if (joined || (usable(w) && stop.indexOf(w) < 0)) { out.push({ text: w, joined: joined }); }
      });
    });
    return out;
  }

  function getJSON(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) { throw new Error(url + ": " + r.status); }
      return r.json();
    });
  }

  /* The JSON at url as `shape` makes it, fetched once into cache[key]; a
     failed fetch is forgotten, so that a later query tries again. */
  function once(cache, key, url, shape) {
    if (!cache[key]) {
      cache[key] = getJSON(url).then(shape);
      cache[key].catch(function () { delete cache[key]; });
    }
    return cache[key];
  }

  /* The numbers of a posting string: base64url digits, five bits each,
     low bits first, a digit from "g" on when more follow. */
  var DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  function numbers(text) {
    var out = [];
    var n = 0;
    var shift = 0;
    for (var i = 0; i < text.length; i++) {
      var d = DIGITS.indexOf(text.charAt(i));
      n += (d & 31) * Math.pow(2, shift);
      shift += 5;
      if (d < 32) { out.push(n); n = 0; shift = 0; }
    }
    return out;
  }

  function Index(dir) {
    this.dir = dir;
    this.shards = {};
    this.pages = {};
    this.meta = getJSON(dir + "index.json");
  }

  /* The shard a word sorts into. */
  Index.prototype.shardOf = function (meta, word) {
    var lo = 0;
    var hi = meta.shards.length - 1;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (meta.shards[mid] <= word) { lo = mid; } else { hi = mid - 1; }
    }
    return lo;
  };

  /* The entries ({w, s, p}) of the shards holding words from lo to hi,
     at most `most` shards (the first ones). */
  Index.prototype.range = function (meta, lo, hi, most) {
    var from = this.shardOf(meta, lo);
    var to = Math.min(this.shardOf(meta, hi), from + most - 1);
    var loads = [];
    for (var i = from; i <= to; i++) {
      loads.push(once(this.shards, i, this.dir + "s/" + i + ".json", function (list) {
        return list.map(function (e) {
          return e.length === 3 ? { w: e[0], s: e[1], p: numbers(e[2]) } : { w: e[0], s: e[0], p: numbers(e[1]) };
        });
      }));
    }
    return Promise.all(loads).then(function (all) { return [].concat.apply([], all); });
  };

  /* The indexed words term t finds, each with its weight. */
  Index.prototype.matches = function (meta, t, last) {
    var self = this;
    var q = t.text;
    var lo = t.joined || q.length < 4 ? q : q.slice(0, 4);
    var prefix = last && q.length >= 3;
    /* Words that begin with the last word (being typed) may fill more
       shards; a first query loads a few at most. */
    var most = prefix ? 3 : 2;
    return this.range(meta, lo, q + "\u007f", most).then(function (entries) {
      var stem = null;
      if (!t.joined) {
        entries.forEach(function (e) {
          if (e.w === q) { stem = e.s; }
        });
        if (stem === null) {
          entries.forEach(function (e) {
            if (e.s.length >= 4 && q.indexOf(e.s) === 0 && (!stem || e.s.length > stem.length)) { stem = e.s; }
          });
        }
        if (stem === null) { stem = q; }
      }
      var more = stem && (stem < lo || stem > q) ? self.range(meta, stem, stem + "\u007f", most) : Promise.resolve([]);
      return more.then(function (extra) {
        var seen = {};
        var found = [];
        entries.concat(extra).forEach(function (e) {
          if (seen[e.w]) { return; }
          seen[e.w] = true;
          var weight = 0;
          if (e.w === q || (stem && e.s === stem)) {
            weight = 1;
          } else if (stem && stem.length >= 3 && e.s.indexOf(stem) === 0) {
            weight = 0.8;
          } else if (prefix && e.w.indexOf(q) === 0) {
            weight = 0.6;
          }
          if (weight) { found.push({ entry: e, weight: weight }); }
        });
        return found;
      });
    });
  };

  /* The results of a query, best first: {page, section, data()}; and the
     words to mark in excerpts. */
  Index.prototype.search = function (text) {
    var self = this;
    return this.meta.then(function (meta) {
      var terms = queryTerms(foldText(text, meta.fold), meta.stop || []);
      if (!terms.length) { return { results: [] }; }
      return Promise.all(terms.map(function (t, i) {
        return self.matches(meta, t, i === terms.length - 1);
      })).then(function (perTerm) {
        var marks = {};
        var prefix = null;
        var last = terms[terms.length - 1];
        if (last.text.length >= 3) { prefix = last.text; }
        /* For each term: page -> {sections: section -> [weight, in
           its heading], title: weight when in the page's title}. */
        var maps = perTerm.map(function (found) {
          var pages = {};
          found.forEach(function (f) {
            marks[f.entry.w] = true;
            var p = f.entry.p;
            var page = 0;
            for (var i = 0; i < p.length;) {
              page += p[i];
              var count = p[i + 1];
              var at = pages[page] || (pages[page] = { sections: {}, title: 0 });
              var s = 0;
              for (var k = 0; k < count; k++) {
                var v = p[i + 2 + k];
                /* 8 × (gap from the previous section) + 1 (in its heading)
                   + 2 (in the title) + 4 (in its text). */
                s += v >> 3;
                var h = (v & 1) === 1;
                if (v & 2) { at.title = Math.max(at.title, f.weight); }
                if (!(v & 5)) { continue; }
                var old = at.sections[s];
                if (!old || old[0] < f.weight || (old[0] === f.weight && h)) { at.sections[s] = [f.weight, h]; }
              }
              i += 2 + count;
            }
          });
          return pages;
        });
        var n = meta.pages;
        var idf = maps.map(function (m) { return Math.log(1 + n / Math.max(1, Object.keys(m).length)); });
        var hits = [];
        Object.keys(maps[0]).forEach(function (key) {
          if (!maps.every(function (m) { return m[key]; })) { return; }
          /* Sections score by the words in them (three times in their
             heading); the page adds its title's words and a fifth of its
             other sections. */
          var scores = {};
          var title = 0;
          maps.forEach(function (m, j) {
            var at = m[key];
            title += idf[j] * at.title * 2;
            Object.keys(at.sections).forEach(function (s) {
              var w = at.sections[s];
              scores[s] = (scores[s] || 0) + idf[j] * w[0] * (w[1] ? 3 : 1);
            });
          });
          var best = 0;
          var top = -1;
          var total = 0;
          Object.keys(scores).forEach(function (s) {
            total += scores[s];
            if (scores[s] > top || (scores[s] === top && +s < best)) { top = scores[s]; best = +s; }
          });
          top = Math.max(top, 0);
          hits.push({ page: +key, section: best, score: top + title + 0.2 * (total - top) });
        });
        hits.sort(function (a, b) { return b.score - a.score || a.page - b.page; });
        return {
          results: hits.map(function (h) {
            return { data: function () { return self.result(h, marks, prefix, meta.fold); } };
          })
        };
      });
    });
  };

  /* What a result shows: the page, the section that matched best and an
     excerpt of it with the words found marked. */
  Index.prototype.result = function (hit, marks, prefix, fold) {
    var url = this.dir + "p/" + hit.page + ".json";
    return once(this.pages, hit.page, url, function (page) { return page; }).then(function (page) {
      var section = page.sections[hit.section] || ["", "", ""];
      var base = body.getAttribute("data-prefix") || "";
      return {
        url: base + page.url + (section[1] ? "#" + section[1] : ""),
        title: page.title,
        heading: section[0],
        excerpt: excerpt(section[2] || section[0] || page.title, marks, prefix, fold)
      };
    });
  };

  /* About thirty words of text around the first one found: [[text, marked]]. */
  function excerpt(text, marks, prefix, fold) {
    var words = text.split(/\s+/).filter(function (w) { return w; });
    var marked = words.map(function (w) {
      return pieces(foldText(w, fold)).some(function (p) {
        return marks[p] || (prefix && p.indexOf(prefix) === 0);
      });
    });
    var first = Math.max(0, marked.indexOf(true));
    var start = Math.max(0, first - 8);
    var end = Math.min(words.length, start + 30);
    var out = [];
    if (start > 0) { out.push(["… ", false]); }
    for (var i = start; i < end; i++) {
      if (marked[i]) {
        /* The word marked, not the punctuation around it. */
        var m = words[i].match(/^([^\p{L}\p{N}]*)([\s\S]*?)([^\p{L}\p{N}]*)$/u);
        out.push([m[1], false], [m[2], true], [m[3], false]);
      } else {
        out.push([words[i], false]);
      }
      if (i + 1 < end) { out.push([" ", false]); }
    }
    if (end < words.length) { out.push([" …", false]); }
    return out;
  }

  function excerptNode(parts) {
    var out = document.createElement("span");
    out.className = "result-excerpt";
    parts.forEach(function (p) {
      if (!p[0]) { return; }
      if (p[1]) {
        var m = document.createElement("mark");
        m.textContent = p[0];
        out.appendChild(m);
      } else {
        out.appendChild(document.createTextNode(p[0]));
      }
    });
    return out;
  }

  function setUpSearch(form) {
    var input = form.querySelector("input");
    var box = form.querySelector(".search-results");
    var status = form.querySelector("[role=status]");
    var bundle = form.getAttribute("data-bundle");
    var language = null;
    var loading = null;
    var current = null;
    var shown = 0;
    form.hidden = false;

    function engine() {
      if (!loading) {
        var index = new Index(bundle + (language || document.documentElement.getAttribute("lang")) + "/");
        loading = index.meta.then(function () { return index; });
        loading.catch(function () { loading = null; });
      }
      return loading;
    }
    function close() {
      box.hidden = true;
    }
    function links() { return Array.prototype.slice.call(box.querySelectorAll("a")); }
    function resultItem(data) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = data.url;
      var heading = data.heading && data.heading !== data.title ? data.heading : "";
      if (heading) {
        var page = document.createElement("span");
        page.className = "result-page";
        page.textContent = data.title;
        a.appendChild(page);
      }
      var title = document.createElement("span");
      title.className = "result-heading";
      title.textContent = heading || data.title;
      a.appendChild(title);
      a.appendChild(excerptNode(data.excerpt));
      a.addEventListener("click", close);
      li.appendChild(a);
      return li;
    }
    function showMore(list, results, text) {
      var next = results.slice(shown, shown + PAGE);
      shown += next.length;
      return Promise.all(next.map(function (r) { return r.data(); })).then(function (all) {
        if (input.value !== text) { return; }
        all.forEach(function (d) { list.appendChild(resultItem(d)); });
        var old = box.querySelector(".more");
        if (old) { old.parentNode.removeChild(old); }
        if (shown < results.length) {
          var more = document.createElement("button");
          more.type = "button";
          more.className = "more";
          more.textContent = form.getAttribute("data-more");
          more.addEventListener("click", function () {
            var focusAt = shown;
            showMore(list, results, text).then(function () {
              var all = links();
              if (all[focusAt]) { all[focusAt].focus(); }
            });
          });
          box.appendChild(more);
        }
      });
    }
    function show(search, text) {
      box.textContent = "";
      shown = 0;
      var results = search.results;
      if (!results.length) {
        var empty = document.createElement("p");
        empty.className = "empty";
        empty.textContent = form.getAttribute("data-none");
        box.appendChild(empty);
        status.textContent = form.getAttribute("data-none");
        box.hidden = false;
        return;
      }
      var list = document.createElement("ul");
      box.appendChild(list);
      showMore(list, results, text).then(function () {
        status.textContent = results.length + " " + form.getAttribute("data-results");
        box.hidden = false;
      });
    }
    function run() {
      var text = input.value;
      if (text.trim().length < 2) { close(); return; }
      current = text;
      engine().then(function (index) {
        return index.search(text);
      }).then(function (search) {
        if (search && current === text && input.value === text) { show(search, text); }
      });
    }

    input.addEventListener("focus", function () { engine(); });
    input.addEventListener("input", run);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var first = links()[0];
      if (first) { first.click(); location.href = first.href; }
    });
    form.addEventListener("keydown", function (e) {
      var all = links();
      var at = all.indexOf(document.activeElement);
      if (e.key === "ArrowDown" && all.length) {
        e.preventDefault();
        all[Math.min(at + 1, all.length - 1)].focus();
      } else if (e.key === "ArrowUp" && at >= 0) {
        e.preventDefault();
        if (at === 0) { input.focus(); } else { all[at - 1].focus(); }
      } else if (e.key === "Escape") {
        close();
        input.focus();
      }
    });
    document.addEventListener("click", function (e) {
      if (!form.contains(e.target)) { close(); }
    });
    /* "/" or Ctrl-K (Cmd-K) from anywhere but a text field. */
    document.addEventListener("keydown", function (e) {
      var t = e.target;
      var typing = t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
      var slash = e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey;
      var k = (e.key === "k" || e.key === "K") && (e.ctrlKey || e.metaKey) && !e.altKey;
      if (slash || k) {
        e.preventDefault();
        input.focus();
        input.select();
      }
    });
    /* Search the language a 404 was asked for. */
    var notFound = document.querySelector(".not-found[data-languages]");
    if (notFound) {
      var prefix = body.getAttribute("data-prefix") || "";
      var parts = location.pathname.slice(prefix.length).split("/");
      var rest = parts[1];
      /* And its docs version (`/es/1.29/…`), when the URL names one. */
      var versions = (notFound.getAttribute("data-versions") || "").split(" ");
      if (parts.length > 3 && parts[2] && versions.indexOf(parts[2]) >= 0) {
        bundle = prefix + "/search/" + parts[2] + "/";
        form.setAttribute("data-bundle", bundle);
      }
      if (notFound.getAttribute("data-languages").split(" ").indexOf(rest) >= 0) {
        language = rest;
        form.setAttribute("data-language", rest);
        document.querySelectorAll("a.brand").forEach(function (a) {
          a.setAttribute("href", prefix + "/" + rest + "/");
        });
        var mine = notFound.querySelector('li[lang="' + rest + '"]');
        if (mine) {
          mine.classList.add("here");
          mine.parentNode.insertBefore(mine, mine.parentNode.firstChild);
          /* The page is the default language's: it speaks the URL's. */
          var root = document.documentElement;
          var was = root.getAttribute("lang");
          root.setAttribute("lang", rest);
          root.setAttribute("dir", mine.getAttribute("dir") || "ltr");
          var say = function (key) { return mine.getAttribute("data-" + key) || ""; };
          input.setAttribute("placeholder", say("search-placeholder"));
          form.setAttribute("data-none", say("no-results"));
          form.setAttribute("data-results", say("results"));
          form.setAttribute("data-more", say("more-results"));
          var label = form.querySelector("label");
          if (label) { label.textContent = say("search"); }
          var skip = document.querySelector("a.skip");
          if (skip) { skip.textContent = say("skip"); }
          /* Links into the default language's pages go to the URL's. */
          var from = prefix + "/" + was + "/";
          document.querySelectorAll("header a[href], footer a[href]").forEach(function (a) {
            var href = a.getAttribute("href");
            if (href.indexOf(from) === 0) { a.setAttribute("href", prefix + "/" + rest + "/" + href.slice(from.length)); }
          });
        }
      }
    }
  }

  /* ---- Theme: the system's, light or dark --------------------------- */

  function setUpTheme(button) {
    var root = document.documentElement;
    var order = ["auto", "light", "dark"];
    var label = button.querySelector(".theme-label");
    function current() {
      var t = root.getAttribute("data-theme");
      return t === "light" || t === "dark" ? t : "auto";
    }
    function paint() {
      var t = current();
      label.textContent = button.getAttribute("data-" + t);
      button.setAttribute("data-current", t);
    }
    button.hidden = false;
    paint();
    button.addEventListener("click", function () {
      var next = order[(order.indexOf(current()) + 1) % order.length];
      if (next === "auto") { root.removeAttribute("data-theme"); } else { root.setAttribute("data-theme", next); }
      try {
        if (next === "auto") { localStorage.removeItem("basepress-theme"); } else { localStorage.setItem("basepress-theme", next); }
      } catch (e) { /* private mode: the choice lasts for this page */ }
      paint();
      announce(label.textContent);
    });
  }

  /* ---- Tabs: one panel at a time, the same choice on every page ----- */

  var TAB_KEY = "basepress-tab";

  function savedTab() {
    try { return localStorage.getItem(TAB_KEY); } catch (e) { return null; }
  }

  function setUpTabs(sets) {
    var all = [];
    sets.forEach(function (set, n) {
      var panels = Array.prototype.slice.call(set.querySelectorAll(":scope > .tab-panel"));
      if (panels.length < 2) { return; }
      var list = document.createElement("div");
      list.className = "tab-list";
      list.setAttribute("role", "tablist");
      var buttons = panels.map(function (panel, i) {
        var name = panel.getAttribute("data-tab");
        var b = document.createElement("button");
        b.type = "button";
        b.id = "tab-" + n + "-" + i;
        panel.id = panel.id || "tab-panel-" + n + "-" + i;
        b.setAttribute("role", "tab");
        b.setAttribute("aria-controls", panel.id);
        b.textContent = name;
        panel.setAttribute("role", "tabpanel");
        panel.setAttribute("aria-labelledby", b.id);
        b.addEventListener("click", function () {
          try { localStorage.setItem(TAB_KEY, name); } catch (e) { /* not remembered */ }
          all.forEach(function (s) { s.select(name, false); });
          select(name, true);
        });
        b.addEventListener("keydown", function (e) {
          var to = e.key === "ArrowRight" ? i + 1 : e.key === "ArrowLeft" ? i - 1 : null;
          if (to === null) { return; }
          e.preventDefault();
          var t = buttons[(to + buttons.length) % buttons.length];
          t.focus();
          t.click();
        });
        list.appendChild(b);
        return b;
      });
      function select(name, focus) {
        var at = panels.map(function (p) { return p.getAttribute("data-tab"); }).indexOf(name);
        if (at < 0) { return; }
        panels.forEach(function (p, i) {
          p.hidden = i !== at;
          buttons[i].setAttribute("aria-selected", i === at ? "true" : "false");
          buttons[i].tabIndex = i === at ? 0 : -1;
        });
        if (focus) { buttons[at].focus(); }
      }
      set.insertBefore(list, set.firstChild);
      set.classList.add("ready");
      select(panels[0].getAttribute("data-tab"), false);
      all.push({ select: select });
    });
    var saved = savedTab();
    if (saved) { all.forEach(function (s) { s.select(saved, false); }); }
  }

  /* ---- Menu on narrow screens --------------------------------------- */

  function setUpMenu(button) {
    var nav = document.getElementById(button.getAttribute("aria-controls"));
    if (!nav) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var open = nav.classList.toggle("open");
      button.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  /* ---- Language switcher: same section in the other language --------- */

  function currentSection(headings) {
    var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    var at = headings.indexOf(target);
    if (at >= 0) {
      var top = target.getBoundingClientRect().top;
      if (top >= 0 && top < window.innerHeight) { return at; }
    }
    at = -1;
    headings.forEach(function (h, i) {
      if (h.getBoundingClientRect().top <= 120) { at = i; }
    });
    return at;
  }

  function setUpSwitcher() {
    var article = document.querySelector("article");
    if (!article) { return; }
    document.querySelectorAll(".languages a[data-anchors]").forEach(function (link) {
      link.addEventListener("click", function (e) {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button) { return; }
        var headings = Array.prototype.slice.call(
          article.querySelectorAll("h1[id], h2[id], h3[id], h4[id], h5[id], h6[id]"));
        var anchors = link.getAttribute("data-anchors").split(" ");
        var at = currentSection(headings);
        if (at < 0 || !anchors[at]) { return; }
        e.preventDefault();
        location.href = link.href.split("#")[0] + "#" + anchors[at];
      });
    });
  }

  /* ---- Version picker: closes like a menu --------------------------- */

  function setUpPickers() {
    var pickers = document.querySelectorAll("details.versions");
    document.addEventListener("click", function (e) {
      pickers.forEach(function (d) { if (!d.contains(e.target)) { d.open = false; } });
    });
    document.addEventListener("keydown", function (e) {
      if (e.key !== "Escape") { return; }
      pickers.forEach(function (d) {
        if (d.open) { d.open = false; d.querySelector("summary").focus(); }
      });
    });
  }

  /* ---- Table of contents: mark the section in view ------------------ */

  function setUpToc() {
    var links = document.querySelectorAll(".toc a[href^='#']");
    if (!links.length || !("IntersectionObserver" in window)) { return; }
    var byId = {};
    links.forEach(function (a) { byId[decodeURIComponent(a.getAttribute("href").slice(1))] = a; });
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) { return; }
        links.forEach(function (a) { a.classList.remove("active"); });
        var a = byId[entry.target.id];
        if (a) { a.classList.add("active"); }
      });
    }, { rootMargin: "0px 0px -70% 0px" });
    Object.keys(byId).forEach(function (id) {
      var h = document.getElementById(id);
      if (h) { observer.observe(h); }
    });
  }

  addCopyButtons();
  setUpTabs(Array.prototype.slice.call(document.querySelectorAll(".tabs")));
  document.querySelectorAll("form.search").forEach(setUpSearch);
  document.querySelectorAll("button.theme").forEach(setUpTheme);
  document.querySelectorAll("button.menu").forEach(setUpMenu);
  setUpSwitcher();
  setUpPickers();
  setUpToc();
})();
