package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// batchEvent is one event of a batch on its way into the events table.
type batchEvent struct {
	// e is the event cleaned, without its app when it counts for none.
	e      Event
	status string
	r      Recorded
	// dep is the deployment the event joins (applied events).
	dep *batchDeployment
}

// newBatchEvent cleans e and decides whether it counts for its app.
func newBatchEvent(e Event) batchEvent {
	e = e.clean()
	if e.App.Named() && e.IgnoredReason == "" {
		return batchEvent{e: e, status: EventApplied}
	}
	// An event that counts for no app keeps its metadata, not its body,
	// nor the app it may have named.
	e.Body = nil
	e.App, e.Component, e.SpecRevision, e.Environment = layout.AppRef{}, "", "", ""
	return batchEvent{e: e, status: EventIgnored}
}

// merge sets the component state an inserted event reports on its
// deployment, in the batch's order, and returns the event's outcome.
func (b *batchEvent) merge() Recorded {
	if b.r.Duplicate {
		return Recorded{Duplicate: true}
	}
	if b.status != EventApplied {
		return b.r
	}
	b.dep.comps = mergeComponent(b.dep.comps, b.e)
	b.dep.dirty = true
	if b.dep.spec == "" {
		b.dep.spec = b.e.SpecRevision
	}
	return b.r
}

const insertEventCols = `dedupe_key, received_at, event_time, object_kind, object_namespace, object_name,
	severity, reason, message, revision, controller, project, app, component, spec_revision,
	status, deployment_id, body, ignored_reason, environment`

// insertEvents inserts the batch's events in order, setting each one's id
// or marking it a duplicate of a stored event (or of an earlier one of the
// batch).
func (s *sqlStore) insertEvents(t *txStmts, bs []batchEvent) error {
	if s.d.arrays {
		return s.insertEventArrays(t, bs)
	}
	for i := range bs {
		b := &bs[i]
		e := &b.e
		err := t.queryRow(`INSERT INTO events (`+insertEventCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
			e.DedupeKey, ts(e.ReceivedAt), ts(e.EventTime), e.Kind, e.Namespace, e.Name,
			e.Severity, e.Reason, e.Message, e.Revision, e.Controller, e.App.Project, e.App.Name, e.Component, e.SpecRevision,
			b.status, b.r.DeploymentID, string(e.Body), e.IgnoredReason, e.Environment).Scan(&b.r.EventID)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			b.r.Duplicate = true
		case err != nil:
			return fmt.Errorf("event %s/%s/%s %s: inserting event: %w", e.Kind, e.Namespace, e.Name, e.Reason, err)
		}
	}
	return nil
}

// insertEventArrays inserts the batch's events in one statement, one
// array per column, in the batch's order. An event whose key an earlier
// one of the batch has is a duplicate without being sent: the statement
// then names each key once, and its RETURNING tells the stored events
// from those whose key was stored before.
func (s *sqlStore) insertEventArrays(t *txStmts, bs []batchEvent) error {
	var (
		keys, kinds, namespaces, names, severities, reasons, messages, revisions, controllers []string
		projects, apps, components, specs, statuses, bodies, ignored, envs                    []string
		received, times, deps                                                                 []int64
	)
	at := make(map[string]int, len(bs))
	for i := range bs {
		b := &bs[i]
		e := &b.e
		if _, ok := at[e.DedupeKey]; ok {
			b.r.Duplicate = true
			continue
		}
		at[e.DedupeKey] = i
		keys, received, times = append(keys, e.DedupeKey), append(received, ts(e.ReceivedAt)), append(times, ts(e.EventTime))
		kinds, namespaces, names = append(kinds, e.Kind), append(namespaces, e.Namespace), append(names, e.Name)
		severities, reasons, messages = append(severities, e.Severity), append(reasons, e.Reason), append(messages, e.Message)
		revisions, controllers = append(revisions, e.Revision), append(controllers, e.Controller)
		projects, apps, components, specs = append(projects, e.App.Project), append(apps, e.App.Name), append(components, e.Component), append(specs, e.SpecRevision)
		statuses, deps, bodies = append(statuses, b.status), append(deps, b.r.DeploymentID), append(bodies, string(e.Body))
		ignored, envs = append(ignored, e.IgnoredReason), append(envs, e.Environment)
	}
	rows, err := t.tx.QueryContext(t.ctx, `INSERT INTO events (`+insertEventCols+`)
		SELECT k, rcv, evt, kind, ns, name, sev, reason, msg, rev, ctl, project, app, comp, spec, status, dep, body, why, env
		FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
			$10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::bigint[], $18::text[],
			$19::text[], $20::text[]) WITH ORDINALITY
			AS u(k, rcv, evt, kind, ns, name, sev, reason, msg, rev, ctl, project, app, comp, spec, status, dep, body, why, env, n)
		ORDER BY n
		ON CONFLICT (dedupe_key) DO NOTHING RETURNING id, dedupe_key`,
		keys, received, times, kinds, namespaces, names, severities, reasons, messages, revisions, controllers,
		projects, apps, components, specs, statuses, deps, bodies, ignored, envs)
	if err != nil {
		return fmt.Errorf("inserting events: %w", err)
	}
	defer rows.Close()
	stored := make(map[string]int64, len(keys))
	for rows.Next() {
		var (
			id  int64
			key string
		)
		if err := rows.Scan(&id, &key); err != nil {
			return fmt.Errorf("inserting events: %w", err)
		}
		stored[key] = id
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("inserting events: %w", err)
	}
	for key, i := range at {
		if id, ok := stored[key]; ok {
			bs[i].r.EventID = id
		} else {
			bs[i].r.Duplicate = true
		}
	}
	return nil
}

// readDeployments reads, before the batch's events look for them one by
// one, the deployments they name: by revision, and the app's current one
// for the events that join it (see Event.JoinLatest), one statement each
// (arrays only; SQLite reads each as the events come). The batch holds its
// apps' locks, so what it reads stays true until it commits. A deployment
// not found here is looked for, or created, event by event.
func (s *sqlStore) readDeployments(t *txStmts, bs []batchEvent) error {
	if !s.d.arrays {
		return nil
	}
	var rp, ra, re, rr, lp, la, le []string
	seen := map[string]bool{}
	for i := range bs {
		e := &bs[i].e
		if bs[i].status != EventApplied {
			continue
		}
		key, byRev := batchKeys(e.App, e.Environment, e.Revision)
		if !e.JoinLatest {
			key = byRev
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if e.JoinLatest {
			lp, la, le = append(lp, e.App.Project), append(la, e.App.Name), append(le, e.Environment)
		} else {
			rp, ra, re, rr = append(rp, e.App.Project), append(ra, e.App.Name), append(re, e.Environment), append(rr, e.Revision)
		}
	}
	if len(rp) > 0 {
		if err := t.readDeployments(`SELECT d.project, d.app, d.environment, d.revision, d.id, d.components FROM deployments d
			JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(p, a, e, r)
			ON d.project = u.p AND d.app = u.a AND d.environment = u.e AND d.revision = u.r`, true, rp, ra, re, rr); err != nil {
			return err
		}
	}
	if len(lp) > 0 {
		return t.readDeployments(`SELECT a.project, a.name, a.environment, '', d.id, d.components
			FROM apps a JOIN deployments d ON d.id = a.deployment_id
			JOIN unnest($1::text[], $2::text[], $3::text[]) AS u(p, a, e)
			ON a.project = u.p AND a.name = u.a AND a.environment = u.e`, false, lp, la, le)
	}
	return nil
}

// readDeployments runs query, whose rows are a deployment's project, app,
// environment, revision, id and component states, and keeps each in the
// batch's memory: by revision, or as its app's current deployment.
func (t *txStmts) readDeployments(query string, byRev bool, args ...any) error {
	rows, err := t.tx.QueryContext(t.ctx, query, args...)
	if err != nil {
		return fmt.Errorf("finding deployments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			app             layout.AppRef
			env, rev, comps string
			id              int64
		)
		if err := rows.Scan(&app.Project, &app.Name, &env, &rev, &id, &comps); err != nil {
			return fmt.Errorf("finding deployments: %w", err)
		}
		if t.deps[id] == nil {
			var cs []ComponentState
			if err := json.Unmarshal([]byte(comps), &cs); err != nil {
				return fmt.Errorf("decoding components of deployment %d: %w", id, err)
			}
			t.deps[id] = &batchDeployment{comps: cs}
		}
		appKey, revKey := batchKeys(app, env, rev)
		if byRev {
			t.byRev[revKey] = id
		} else {
			t.latest[appKey] = id
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("finding deployments: %w", err)
	}
	return nil
}

// writeComponents writes the component states (and spec revision) the
// batch merged: in one statement with arrays, else one statement per
// deployment, in id order. Every writer of an app's deployments holds the
// app's lock, so the order their rows are locked in cannot deadlock.
func (s *sqlStore) writeComponents(t *txStmts, now time.Time) error {
	ids := make([]int64, 0, len(t.deps))
	for id, d := range t.deps {
		if d.dirty {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	raws, specs := make([]string, len(ids)), make([]string, len(ids))
	for i, id := range ids {
		raw, err := json.Marshal(t.deps[id].comps)
		if err != nil {
			return fmt.Errorf("encoding components: %w", err)
		}
		raws[i], specs[i] = string(raw), t.deps[id].spec
	}
	if s.d.arrays {
		if len(ids) == 0 {
			return nil
		}
		if _, err := t.tx.ExecContext(t.ctx, `UPDATE deployments AS d SET components = u.c, updated_at = $4,
			spec_revision = CASE WHEN d.spec_revision = '' THEN u.s ELSE d.spec_revision END
			FROM unnest($1::bigint[], $2::text[], $3::text[]) AS u(id, c, s) WHERE d.id = u.id`, ids, raws, specs, ts(now)); err != nil {
			return fmt.Errorf("updating components of %d deployments: %w", len(ids), err)
		}
		return nil
	}
	for i, id := range ids {
		if err := t.exec(`UPDATE deployments SET components = ?, updated_at = ?,
			spec_revision = CASE WHEN spec_revision = '' THEN ? ELSE spec_revision END WHERE id = ?`,
			raws[i], ts(now), specs[i], id); err != nil {
			return fmt.Errorf("updating components of deployment %d: %w", id, err)
		}
	}
	return nil
}
