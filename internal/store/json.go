package store

import (
	"encoding/json"
	"time"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// The types that say which app in a field App write it, in their JSON,
// as the keys "project" and "app" among their own, where they always
// have; App embeds its layout.AppRef and writes "project" and "name".
// Each type's fields before "project" are spelled again below, so that
// the keys keep their order; a field there dominates the one of the same
// key in the type itself.

// appKeys is an app as the keys "project" and "app".
type appKeys struct {
	Project string `json:"project"`
	App     string `json:"app"`
}

func keysOf(r layout.AppRef) appKeys { return appKeys{Project: r.Project, App: r.Name} }

func (k appKeys) ref() layout.AppRef { return layout.AppRef{Project: k.Project, Name: k.App} }

// MarshalJSON writes d with its app as "project" and "app".
func (d Deployment) MarshalJSON() ([]byte, error) {
	type plain Deployment
	return json.Marshal(struct {
		ID int64 `json:"id"`
		appKeys
		plain
	}{d.ID, keysOf(d.App), plain(d)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *Deployment) UnmarshalJSON(b []byte) error {
	type plain Deployment
	w := struct {
		appKeys
		*plain
	}{plain: (*plain)(d)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	d.App = w.ref()
	return nil
}

// MarshalJSON writes c with its app as "project" and "app".
func (c PhaseChange) MarshalJSON() ([]byte, error) {
	type plain PhaseChange
	return json.Marshal(struct {
		Seq int64 `json:"seq"`
		appKeys
		plain
	}{c.Seq, keysOf(c.App), plain(c)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *PhaseChange) UnmarshalJSON(b []byte) error {
	type plain PhaseChange
	w := struct {
		appKeys
		*plain
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	c.App = w.ref()
	return nil
}

// MarshalJSON writes e with its app, when it has one, as "project" and
// "app".
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	return json.Marshal(struct {
		ID         int64     `json:"id"`
		ReceivedAt time.Time `json:"received_at"`
		EventTime  time.Time `json:"timestamp"`
		Kind       string    `json:"kind"`
		Namespace  string    `json:"namespace"`
		Name       string    `json:"name"`
		Severity   string    `json:"severity"`
		Reason     string    `json:"reason"`
		Message    string    `json:"message"`
		Revision   string    `json:"revision,omitempty"`
		Controller string    `json:"controller,omitempty"`
		Project    string    `json:"project,omitempty"`
		App        string    `json:"app,omitempty"`
		plain
	}{e.ID, e.ReceivedAt, e.EventTime, e.Kind, e.Namespace, e.Name, e.Severity, e.Reason, e.Message, e.Revision, e.Controller,
		e.App.Project, e.App.Name, plain(e)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event
	w := struct {
		appKeys
		*plain
	}{plain: (*plain)(e)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	e.App = w.ref()
	return nil
}
