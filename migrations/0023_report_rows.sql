-- The report's rows of the open items, as the last run that wrote them rendered them (without
-- `new`: an item a run carries over unjudged is not new), so that a run that carries an item
-- over unchanged writes its row into report.json, report.md, report.html and review.csv without
-- rendering it again: a quiet night lists thousands of open items, and rendering them was most
-- of its time (docs/benchmarks.md, the ninth session).
--
-- A row is good for the item as the run `judged_run` left it (every run that judges an item
-- stamps its last_seen_run) and for one `layout`: the report's reader (language, time zone), the
-- schema's version and the build that rendered it. Anything else reads as a miss, and the row is
-- rendered and stored again. Derived data: deleting any of it changes no report.
CREATE TABLE reconcile.report_rows (
    review_item_id bigint PRIMARY KEY REFERENCES reconcile.review_items (id) ON DELETE CASCADE,
    judged_run bigint NOT NULL,
    layout text NOT NULL,
    -- report.json's row, the item's evidence as text included (converting the stored jsonb to
    -- text again was most of what reading a quiet night's rows cost PostgreSQL)
    json text NOT NULL,
    markdown text NOT NULL,
    html text NOT NULL,
    csv text NOT NULL
);
