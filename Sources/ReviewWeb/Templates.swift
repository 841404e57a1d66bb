import Mustache

/// The pages' mustache templates, compiled into the binary so `reconcile serve` needs no resource
/// folder. Data is only ever written with `{{ }}`, which HTML-escapes per scalar (HTMLEscaping.swift); `{{{ }}}` is never used.
enum Templates {
    static func library() throws -> MustacheLibrary {
        try MustacheLibrary.scalarEscaped([
            ("layout", layout), ("login", login), ("queue", queue), ("item", item), ("runs", runs), ("error", error),
        ])
    }

    static let layout = """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{$title}}Review queue{{/title}} · iap-reconcile</title>
        <link rel="stylesheet" href="/assets/app.css"></head>
        <body>
        <header class="top">
          <a class="brand" href="/">iap-reconcile <span>review</span></a>
          {{#session}}
          <nav><a href="/" class="{{#onQueue}}active{{/onQueue}}">Queue</a><a href="/runs" class="{{#onRuns}}active{{/onRuns}}">Runs</a></nav>
          <form method="post" action="/logout" class="who">
            <span class="avatar">{{initial}}</span><span>{{name}}</span>
            <input type="hidden" name="csrf_token" value="{{csrf}}">
            <button class="link" type="submit">Log out</button>
          </form>
          {{/session}}
        </header>
        <main>
        {{#flash}}<div class="flash {{#isError}}error{{/isError}}" role="status">{{text}}</div>{{/flash}}
        {{$content}}{{/content}}
        </main>
        </body></html>
        """

    static let login = """
        {{<layout}}
        {{$title}}Log in{{/title}}
        {{$content}}
        <section class="login card">
          <h1>Review queue</h1>
          <p class="muted">Log in with the team token. Your name is recorded with every decision you make.</p>
          {{#error}}<div class="flash error" role="alert">{{error}}</div>{{/error}}
          <form method="post" action="/login">
            <input type="hidden" name="next" value="{{next}}">
            <label>Your name<input name="name" value="{{name}}" required maxlength="200" autocomplete="username"></label>
            <label>Token<input name="token" type="password" required autocomplete="current-password"></label>
            <button class="primary" type="submit">Log in</button>
          </form>
        </section>
        {{/content}}
        {{/layout}}
        """

    static let queue = """
        {{<layout}}
        {{$title}}Review queue{{/title}}
        {{$content}}
        <div class="heading">
          <h1>Review queue</h1>
          <span class="muted">{{total}} items</span>
          <a class="button" href="{{exportHref}}">Export CSV</a>
        </div>
        <div class="chips">
          <a class="chip {{#allKinds}}active{{/allKinds}}" href="{{allKindsHref}}">All kinds</a>
          {{#kindCounts}}<a class="chip sev-{{severity}} {{#active}}active{{/active}} {{#zero}}zero{{/zero}}" href="{{href}}">{{label}} <b>{{count}}</b></a>{{/kindCounts}}
        </div>
        <form class="filters card" method="get" action="/">
          <label>Status<select name="status">{{#statusOptions}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/statusOptions}}</select></label>
          <label>Kind<select name="kind"><option value="">Any kind</option>{{#kindOptions}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/kindOptions}}</select></label>
          <label>Severity<select name="severity"><option value="">Any</option>{{#severityOptions}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/severityOptions}}</select></label>
          <label>User<input name="user" value="{{filter.user}}" placeholder="user id"></label>
          <label>Product<input name="product" value="{{filter.product}}" placeholder="product id"></label>
          <label>Transaction<input name="transaction" value="{{filter.transaction}}" placeholder="transaction id"></label>
          <label>Detected from<input type="date" name="since" value="{{filter.since}}"></label>
          <label>to<input type="date" name="until" value="{{filter.until}}"></label>
          <div class="actions"><button class="primary" type="submit">Filter</button><a href="/" class="button ghost">Reset</a></div>
        </form>
        {{#hasItems}}
        <table class="queue">
          <thead><tr><th>#</th><th>Severity</th><th>Kind</th><th>Status</th><th>Transaction</th><th>User</th><th>Product</th><th>Assignee</th><th>Detected</th></tr></thead>
          <tbody>
          {{#items}}
          <tr>
            <td><a href="{{href}}">{{id}}</a></td>
            <td><span class="sev sev-{{severity}}">{{severity}}</span></td>
            <td><a href="{{href}}">{{kindLabel}}</a></td>
            <td><span class="status st-{{status}}">{{statusLabel}}</span></td>
            <td><code>{{transaction}}</code></td>
            <td>{{user}}</td>
            <td>{{product}}</td>
            <td>{{assignee}}</td>
            <td class="nowrap">{{detected}}</td>
          </tr>
          {{/items}}
          </tbody>
        </table>
        <nav class="pager">
          {{#prevHref}}<a class="button ghost" href="{{prevHref}}">← Previous</a>{{/prevHref}}
          <span>Page {{page}} of {{pageCount}}</span>
          {{#nextHref}}<a class="button ghost" href="{{nextHref}}">Next →</a>{{/nextHref}}
        </nav>
        {{/hasItems}}
        {{^hasItems}}<div class="empty card"><p>Nothing matches this filter.</p><p class="muted">Clear the filter to see the whole queue.</p></div>{{/hasItems}}
        {{/content}}
        {{/layout}}
        """

    static let item = """
        {{<layout}}
        {{$title}}Item {{item.id}}{{/title}}
        {{$content}}
        <p class="crumbs"><a href="/">← Queue</a>{{#nextHref}}<a class="next" href="{{nextHref}}">Next in queue →</a>{{/nextHref}}</p>
        <div class="heading">
          <h1>#{{item.id}} · {{item.kindLabel}}</h1>
          <span class="sev sev-{{item.severity}}">{{item.severity}}</span>
          <span class="status st-{{item.status}}">{{item.statusLabel}}</span>
        </div>
        <p class="lede">{{item.explanation}} Suggested action: <b>{{item.suggestedAction}}</b>.</p>
        <div class="grid">
          <section class="card">
            <h2>Summary</h2>
            <dl class="kv">
              <dt>Transaction</dt><dd><code id="transaction-id">{{item.transaction}}</code></dd>
              <dt>Original transaction</dt><dd><code>{{item.originalTransaction}}</code></dd>
              <dt>{{item.userLabel}}</dt><dd id="user-id">{{item.user}}</dd>
              <dt>Product</dt><dd>{{item.product}}</dd>
              <dt>Detected</dt><dd>{{item.detected}} (run {{item.firstSeenRun}}, last seen in run {{item.lastSeenRun}})</dd>
              <dt>Assignee</dt><dd>{{item.assignee}}</dd>
              {{#item.value}}<dt>Value</dt><dd>{{item.value}}</dd>{{/item.value}}
            </dl>
          </section>
          <section class="card actions-panel">
            <h2>{{#canAct}}Decide{{/canAct}}{{^canAct}}Decision{{/canAct}}</h2>
            {{#canAct}}
              {{#claimedByOther}}
              <p class="muted">Claimed by <b>{{item.assignee}}</b>.</p>
              <form method="post" action="/items/{{item.id}}/claim">
                <input type="hidden" name="csrf_token" value="{{csrf}}"><input type="hidden" name="force" value="1">
                <button type="submit" class="button ghost">Take over</button>
              </form>
              {{/claimedByOther}}
              {{#claimable}}
              <form method="post" action="/items/{{item.id}}/claim">
                <input type="hidden" name="csrf_token" value="{{csrf}}">
                <button type="submit" class="button ghost">Claim — I'm on it</button>
              </form>
              {{/claimable}}
              {{#claimedByMe}}<p class="muted">You claimed this item.</p>{{/claimedByMe}}
              <form method="post" action="/items/{{item.id}}/resolve" class="stack">
                <input type="hidden" name="csrf_token" value="{{csrf}}">
                <label>Resolution
                  <select name="resolution">{{#resolutionOptions}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/resolutionOptions}}</select>
                </label>
                <label>Note<textarea name="note" rows="3" maxlength="2000" placeholder="What you checked, what you decided"></textarea></label>
                <button type="submit" class="primary">Resolve</button>
              </form>
              <form method="post" action="/items/{{item.id}}/dismiss" class="stack dismiss">
                <input type="hidden" name="csrf_token" value="{{csrf}}">
                <label>Dismiss: why is this not a problem?<textarea name="note" rows="2" maxlength="2000" required></textarea></label>
                <button type="submit" class="button danger">Dismiss</button>
              </form>
            {{/canAct}}
            {{^canAct}}
              {{#item.decision}}<p class="decision">{{item.decision}}</p>{{/item.decision}}
              {{#item.note}}<blockquote class="note">{{item.note}}</blockquote>{{/item.note}}
              {{#outbox}}
              <div class="outbox">
                <h3>Action for the app</h3>
                <p><b>{{description}}</b></p>
                <p class="muted">Outbox #{{id}} · {{state}}</p>
              </div>
              {{/outbox}}
              <p class="muted">{{closedMessage}}</p>
            {{/canAct}}
          </section>
        </div>
        <section class="card">
          <h2>Apple transaction</h2>
          {{#hasApple}}<dl class="kv cols">{{#apple}}<dt>{{key}}</dt><dd>{{value}}</dd>{{/apple}}</dl>{{/hasApple}}
          {{^hasApple}}<p class="muted">Apple has no record of this transaction in any verified source.</p>{{/hasApple}}
          {{#buyer}}<p class="buyer">Buyer: <b>{{user}}</b> <span class="muted">({{basis}})</span></p>{{/buyer}}
        </section>
        <section class="card">
          <h2>Delivery ledger</h2>
          {{#hasDeliveries}}
          <table><thead><tr><th>#</th><th>Transaction</th><th>User</th><th>Product</th><th>Qty</th><th>Delivered</th><th>Revoked</th></tr></thead><tbody>
          {{#deliveries}}<tr class="{{#revoked}}revoked{{/revoked}}"><td>{{id}}</td><td><code>{{transaction}}</code></td><td>{{user}}</td><td>{{product}}</td><td>{{quantity}}</td><td class="nowrap">{{delivered}}</td><td class="nowrap">{{revokedAt}}</td></tr>{{/deliveries}}
          </tbody></table>
          {{/hasDeliveries}}
          {{^hasDeliveries}}<p class="muted">No delivery in the ledger.</p>{{/hasDeliveries}}
        </section>
        <section class="card">
          <h2>Uploads</h2>
          {{#hasUploads}}
          <table><thead><tr><th>#</th><th>User</th><th>Kind</th><th>Uploaded</th><th>Device</th><th>Verification</th></tr></thead><tbody>
          {{#uploads}}<tr><td>{{id}}</td><td>{{user}}</td><td>{{kind}}</td><td class="nowrap">{{uploaded}}</td><td>{{device}}</td><td>{{verification}}</td></tr>{{/uploads}}
          </tbody></table>
          {{/hasUploads}}
          {{^hasUploads}}<p class="muted">No upload carried this transaction.</p>{{/hasUploads}}
        </section>
        <section class="card">
          <h2>History</h2>
          <ol class="timeline">
          {{#events}}<li><span class="when">{{when}}</span> <b>{{actor}}</b> {{change}}{{#note}}<div class="note">{{note}}</div>{{/note}}</li>{{/events}}
          </ol>
        </section>
        {{/content}}
        {{/layout}}
        """

    static let runs = """
        {{<layout}}
        {{$title}}Runs{{/title}}
        {{$content}}
        <div class="heading"><h1>Runs</h1></div>
        {{#hasRuns}}
        <table>
          <thead><tr><th>Run</th><th>Status</th><th>Window</th><th>Started</th><th>Uploads</th><th>Findings</th><th>New</th><th>Report</th></tr></thead>
          <tbody>
          {{#runs}}<tr><td>{{id}}{{#dryRun}} <span class="muted">(dry)</span>{{/dryRun}}</td><td><span class="status st-{{status}}">{{statusLabel}}</span></td><td>{{window}}</td><td class="nowrap">{{started}}</td><td>{{uploads}}</td><td>{{findings}}</td><td>{{newFindings}}</td><td>{{#reportHref}}<a href="{{reportHref}}">report</a>{{/reportHref}}{{^reportHref}}<span class="muted">—</span>{{/reportHref}}</td></tr>{{/runs}}
          </tbody>
        </table>
        {{/hasRuns}}
        {{^hasRuns}}<div class="empty card"><p>No runs yet.</p></div>{{/hasRuns}}
        {{/content}}
        {{/layout}}
        """

    static let error = """
        {{<layout}}
        {{$title}}{{heading}}{{/title}}
        {{$content}}
        <section class="card empty"><h1>{{heading}}</h1><p>{{message}}</p><p><a href="/">Back to the queue</a></p></section>
        {{/content}}
        {{/layout}}
        """

    static let css = """
        :root{--ink:#0f172a;--muted:#64748b;--line:#e2e8f0;--bg:#f6f7fb;--card:#fff;--accent:#2563eb;\
        font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",sans-serif;color:var(--ink);\
        background:var(--bg);font-size:15px}
        body{margin:0}
        a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
        code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em;overflow-wrap:anywhere}
        .top{display:flex;align-items:center;gap:24px;padding:12px 28px;background:#0f172a;color:#e2e8f0}
        .brand{color:#fff;font-weight:700;letter-spacing:.2px}.brand span{color:#93c5fd;font-weight:500}
        .top nav{display:flex;gap:4px}.top nav a{color:#cbd5e1;padding:6px 12px;border-radius:8px}
        .top nav a.active,.top nav a:hover{background:#1e293b;color:#fff;text-decoration:none}
        .who{margin-left:auto;display:flex;align-items:center;gap:8px;font-size:.9rem}
        .avatar{width:26px;height:26px;border-radius:50%;background:#3b82f6;color:#fff;display:inline-flex;\
        align-items:center;justify-content:center;font-weight:700;font-size:.8rem}
        button.link{background:none;border:0;color:#93c5fd;cursor:pointer;font:inherit;padding:0}
        main{max-width:1180px;margin:0 auto;padding:24px 28px 48px}
        h1{font-size:1.5rem;margin:0}h2{font-size:1rem;margin:0 0 12px}h3{font-size:.92rem;margin:0 0 6px}
        .heading{display:flex;align-items:center;gap:12px;margin-bottom:14px}.heading .button{margin-left:auto}
        .muted{color:var(--muted)}.lede{color:#334155;margin:0 0 18px}.crumbs{margin:0 0 8px;display:flex;justify-content:space-between}
        .card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:18px 20px;\
        margin-bottom:18px;box-shadow:0 1px 2px rgba(15,23,42,.04)}
        .grid{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:18px}
        .grid .card{margin-bottom:0}.grid{margin-bottom:18px}
        @media (max-width:900px){.grid{grid-template-columns:1fr}}
        .button,button.primary{display:inline-block;border-radius:8px;padding:8px 14px;font:inherit;font-weight:600;\
        cursor:pointer;border:1px solid var(--line);background:#fff;color:var(--ink)}
        button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
        .button.ghost:hover,.button:hover{background:#f1f5f9;text-decoration:none}
        .button.danger{color:#b91c1c;border-color:#fecaca}.button.danger:hover{background:#fef2f2}
        label{display:flex;flex-direction:column;gap:4px;font-size:.8rem;color:#475569;font-weight:600}
        input,select,textarea{font:inherit;font-weight:400;color:var(--ink);border:1px solid #cbd5e1;border-radius:8px;\
        padding:7px 9px;background:#fff}textarea{resize:vertical}
        input:focus,select:focus,textarea:focus{outline:2px solid #bfdbfe;border-color:var(--accent)}
        .filters{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:12px;align-items:end}
        .filters .actions{display:flex;gap:8px}
        .chips{display:flex;flex-wrap:wrap;gap:8px;margin-bottom:14px}
        .chip{border:1px solid var(--line);background:#fff;border-radius:999px;padding:5px 12px;font-size:.85rem;color:#334155}
        .chip b{margin-left:4px}.chip.zero{color:#94a3b8}.chip.active{background:#0f172a;color:#fff;border-color:#0f172a}
        .chip:hover{text-decoration:none;border-color:#94a3b8}
        .chip.sev-high b{color:#dc2626}.chip.sev-medium b{color:#d97706}.chip.sev-low b{color:#4d7c0f}
        .chip.active b{color:#fff}
        table{width:100%;border-collapse:collapse;background:#fff;font-size:.9rem}
        table.queue{border:1px solid var(--line);border-radius:12px;overflow:hidden}
        th,td{text-align:left;padding:9px 10px;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
        th{white-space:nowrap;font-size:.75rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);background:#f8fafc}
        tbody tr:hover{background:#f8fafc}.nowrap{white-space:nowrap}tr.revoked td{color:#94a3b8;text-decoration:line-through}
        .sev,.status{display:inline-block;border-radius:6px;padding:2px 8px;font-size:.78rem;font-weight:600}
        .sev-high{background:#fee2e2;color:#b91c1c}.sev-medium{background:#fef3c7;color:#92400e}.sev-low{background:#ecfccb;color:#3f6212}
        .st-open{background:#dbeafe;color:#1e40af}.st-in_review{background:#ede9fe;color:#5b21b6}
        .st-resolved,.st-completed{background:#dcfce7;color:#166534}.st-dismissed{background:#f1f5f9;color:#475569}
        .st-auto_resolved{background:#f0fdfa;color:#115e59}.st-failed,.st-interrupted{background:#fee2e2;color:#991b1b}
        .st-running,.st-completed_with_unresolved{background:#fef3c7;color:#92400e}
        .pager{display:flex;align-items:center;justify-content:center;gap:14px;margin-top:16px;color:var(--muted)}
        .kv{display:grid;grid-template-columns:max-content 1fr;gap:6px 16px;margin:0}.kv dt{color:var(--muted)}.kv dd{margin:0}
        .kv.cols{grid-template-columns:max-content 1fr max-content 1fr}
        .outbox{margin-top:16px;padding:12px 14px;border-radius:10px;background:#f0fdf4;border:1px solid #bbf7d0}
        .outbox p{margin:2px 0}
        .stack{display:flex;flex-direction:column;gap:10px;margin-top:14px}.dismiss{padding-top:14px;border-top:1px dashed var(--line)}
        .actions-panel form:first-of-type{margin-top:0}
        .flash{padding:10px 14px;border-radius:10px;background:#ecfdf5;border:1px solid #a7f3d0;color:#065f46;margin-bottom:16px}
        .flash.error{background:#fef2f2;border-color:#fecaca;color:#991b1b}
        .timeline{list-style:none;margin:0;padding:0}.timeline li{padding:8px 0 8px 16px;border-left:2px solid #cbd5e1;\
        margin-left:6px;position:relative}.timeline li::before{content:"";position:absolute;left:-6px;top:13px;width:10px;\
        height:10px;border-radius:50%;background:#3b82f6}.timeline .when{color:var(--muted);font-size:.82rem;margin-right:6px}
        .note{white-space:pre-wrap;color:#334155;margin-top:2px}
        .buyer{margin:12px 0 0}.decision{font-weight:600;margin:0 0 10px}
        blockquote.note{margin:0 0 12px;padding:8px 12px;border-left:3px solid #cbd5e1;background:#f8fafc;border-radius:0 8px 8px 0}.empty{text-align:center;color:#475569}
        .login{max-width:380px;margin:60px auto}.login form{display:flex;flex-direction:column;gap:14px;margin-top:14px}
        """
}
