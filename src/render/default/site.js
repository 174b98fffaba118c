/* basepress: the site's script. Search, copy buttons, the menu on narrow
   screens, a language switcher that keeps the reader's section, and the
   version picker. No dependencies, no request to any other host; the page
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
    var label = body.getAttribute("data-copy") || "Copy";
    var done = body.getAttribute("data-copied") || "Copied";
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

  /* Folds text the way the build folds the index: marks removed,
     lowercase, split at anything but a letter or digit. */
  function fold(text) {
    return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/\u00df/g, "ss").replace(/\u00e6/g, "ae").replace(/\u0153/g, "oe")
      .replace(/\u00f8/g, "o").replace(/\u0111/g, "d").replace(/\u0142/g, "l");
  }
  function terms(text) {
    return fold(text).split(/[^a-z0-9]+/).filter(function (w) { return w.length > 0; });
  }

  function loadIndex(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) { throw new Error(url + ": " + r.status); }
      return r.json();
    }).then(function (raw) {
      var postings = raw.postings.map(function (gaps) {
        var at = 0;
        return gaps.map(function (g) { at += g; return at; });
      });
      return {
        stop: raw.stop || [],
        pages: raw.pages.map(function (p) { return { title: p[0], url: p[1], folded: fold(p[0]) }; }),
        sections: raw.sections.map(function (s) {
          return { page: s[0], title: s[1], anchor: s[2], folded: fold(s[1]) };
        }),
        words: raw.words,
        postings: postings
      };
    });
  }

  /* The first index in the sorted `words` at or after `term`. */
  function lowerBound(words, term) {
    var lo = 0, hi = words.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (words[mid] < term) { lo = mid + 1; } else { hi = mid; }
    }
    return lo;
  }

  /* Sections matching every term (as a word or a word's beginning), best
     first: exact words, then words in the heading or page title. */
  function query(index, text, limit) {
    /* Words too common to be indexed are ignored, but for the last one,
       which may be the start of a longer word still being typed. */
    var ts = terms(text).filter(function (t, i, all) {
      return i === all.length - 1 || index.stop.indexOf(t) < 0;
    });
    if (!ts.length) { return []; }
    var scores = null;
    ts.forEach(function (term) {
      var found = new Map();
      for (var i = lowerBound(index.words, term); i < index.words.length; i++) {
        var word = index.words[i];
        if (word.lastIndexOf(term, 0) !== 0) { break; }
        var weight = word === term ? 3 : 1;
        index.postings[i].forEach(function (s) {
          found.set(s, Math.max(found.get(s) || 0, weight));
        });
      }
      var next = new Map();
      found.forEach(function (weight, s) {
        if (scores && !scores.has(s)) { return; }
        var sec = index.sections[s];
        var bonus = 0;
        if (sec.folded.indexOf(term) >= 0) { bonus += 4; }
        if (index.pages[sec.page].folded.indexOf(term) >= 0) { bonus += 2; }
        next.set(s, (scores ? scores.get(s) : 0) + weight + bonus);
      });
      scores = next;
    });
    var hits = [];
    scores.forEach(function (score, s) { hits.push([score, s]); });
    hits.sort(function (a, b) { return b[0] - a[0] || a[1] - b[1]; });
    return hits.slice(0, limit).map(function (h) {
      var sec = index.sections[h[1]];
      var page = index.pages[sec.page];
      return {
        page: page.title,
        heading: sec.title,
        url: page.url + (sec.anchor ? "#" + sec.anchor : "")
      };
    });
  }

  function setUpSearch(form) {
    var input = form.querySelector("input");
    var list = form.querySelector(".search-results");
    var status = form.querySelector("[role=status]");
    var loading = null;
    var index = null;
    form.hidden = false;

    function ensureIndex() {
      if (!loading) {
        loading = loadIndex(form.getAttribute("data-index")).then(function (i) { index = i; return i; });
        loading.catch(function () { loading = null; });
      }
      return loading;
    }
    function close() {
      list.hidden = true;
      input.setAttribute("aria-expanded", "false");
    }
    function show(results) {
      list.textContent = "";
      if (!results.length) {
        var empty = document.createElement("li");
        empty.className = "empty";
        empty.textContent = form.getAttribute("data-none");
        list.appendChild(empty);
        status.textContent = form.getAttribute("data-none");
      } else {
        results.forEach(function (r) {
          var li = document.createElement("li");
          var a = document.createElement("a");
          a.href = r.url;
          var page = document.createElement("span");
          page.className = "result-page";
          page.textContent = r.page;
          var heading = document.createElement("span");
          heading.className = "result-heading";
          heading.textContent = r.heading || r.page;
          if (r.heading) { a.appendChild(page); }
          a.appendChild(heading);
          a.addEventListener("click", close);
          li.appendChild(a);
          list.appendChild(li);
        });
        status.textContent = results.length + " " + form.getAttribute("data-results");
      }
      list.hidden = false;
      input.setAttribute("aria-expanded", "true");
    }
    function run() {
      var text = input.value;
      if (fold(text).replace(/[^a-z0-9]/g, "").length < 2) { close(); return; }
      ensureIndex().then(function (i) {
        if (input.value === text) { show(query(i, text, 10)); }
      });
    }
    function links() { return Array.prototype.slice.call(list.querySelectorAll("a")); }

    input.addEventListener("focus", ensureIndex);
    input.addEventListener("input", run);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var first = links()[0];
      if (first) { first.click(); }
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
    /* Search the index of the language a 404 was asked for. */
    var notFound = document.querySelector(".not-found[data-languages]");
    if (notFound) {
      var prefix = body.getAttribute("data-prefix") || "";
      var rest = location.pathname.slice(prefix.length).split("/")[1];
      if (notFound.getAttribute("data-languages").split(" ").indexOf(rest) >= 0) {
        form.setAttribute("data-index", prefix + "/" + rest + "/search-index.json");
        document.querySelectorAll("a.brand").forEach(function (a) {
          a.setAttribute("href", prefix + "/" + rest + "/");
        });
        var mine = notFound.querySelector('li[lang="' + rest + '"]');
        if (mine) {
          mine.classList.add("here");
          mine.parentNode.insertBefore(mine, mine.parentNode.firstChild);
        }
      }
    }
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
  document.querySelectorAll("form.search").forEach(setUpSearch);
  document.querySelectorAll("button.menu").forEach(setUpMenu);
  setUpSwitcher();
  setUpPickers();
  setUpToc();
})();
