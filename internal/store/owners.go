package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fleetwright/fleetwright/internal/fleet/layout"
)

// OwnerSlots is the number of slots the apps hash into; a replica owns the
// apps of the slots it holds.
const OwnerSlots = 64

// OwnersOptions configures SQL.Owners.
type OwnersOptions struct {
	// Interval is how often a replica counts the replicas alive and takes
	// or gives up slots; default 2s. A crashed replica's apps have a new
	// owner within about one interval.
	Interval time.Duration
	// Logger; default discard.
	Logger *slog.Logger
}

// Owners divides the apps among the webhook replicas sharing one
// PostgreSQL database, and carries their wake-ups (LISTEN/NOTIFY).
//
// The apps hash into OwnerSlots slots. A replica owns a slot while it holds
// the slot's session advisory lock on a connection of its own. Every
// replica also holds a shared member lock, so each counts the replicas
// alive and keeps its fair share, the slots divided by the replicas
// rounded up: it gives up the slots beyond its share and tries the free
// ones below it. Closing releases the locks at once; a replica that dies
// loses them with its connection, and the others take its slots at their
// next round. The locks are scoped to the schema, so replicas of different
// schemas in one database do not share apps.
type Owners struct {
	db       *sql.DB
	class    int32
	interval time.Duration
	log      *slog.Logger
	// noticeChannel carries Notify's messages; logChannel the commits of
	// phase changes (see flushChanges).
	noticeChannel, logChannel string
	offset                    int

	mu    sync.Mutex
	owned [OwnerSlots]bool
	n     int

	conn    *sql.Conn
	changed chan struct{}
	logged  chan struct{}
	notices chan string
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// schemaClass returns the advisory lock class and channel prefix of the
// connection's schema.
func schemaClass(ctx context.Context, db *sql.DB) (int32, error) {
	var schema string
	if err := db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return 0, fmt.Errorf("reading the schema: %w", err)
	}
	h := fnv.New32a()
	h.Write([]byte(schema))
	// Positive, and never the migration lock's key space (one bigint).
	return int32(h.Sum32() & 0x7fffffff), nil
}

func logChannel(class int32) string { return fmt.Sprintf("fleetwright_%08x_log", class) }

// Owners returns the coordination of the replicas sharing this
// PostgreSQL database; Start begins it. SQLite (one replica) has none.
func (s *SQL) Owners(opts OwnersOptions) (*Owners, error) {
	if !s.d.advisory {
		return nil, errors.New("owners: only a PostgreSQL store is shared by several replicas")
	}
	if opts.Interval <= 0 {
		opts.Interval = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Owners{
		db: s.db, class: s.class, interval: opts.Interval, log: opts.Logger,
		noticeChannel: fmt.Sprintf("fleetwright_%08x_notice", s.class), logChannel: logChannel(s.class),
		offset:  rand.IntN(OwnerSlots),
		changed: make(chan struct{}, 1), logged: make(chan struct{}, 1), notices: make(chan string, 4096),
	}, nil
}

// SlotOf returns the slot of an app in an environment (see AppKey; an
// app of no environment keeps the slot it had before environments).
func SlotOf(app layout.AppRef, env string) int {
	h := fnv.New32a()
	h.Write([]byte(AppKey(app, env)))
	return int(h.Sum32() % OwnerSlots)
}

// Start listens for wake-ups, takes this replica's first slots and keeps
// its share every Interval until Close.
func (o *Owners) Start(ctx context.Context) error {
	lctx, cancel := context.WithCancel(context.Background())
	o.cancel = cancel
	ready := make(chan struct{})
	o.wg.Add(2)
	go o.listen(lctx, ready)
	select {
	case <-ready:
	case <-ctx.Done():
		o.Close()
		return ctx.Err()
	}
	if err := o.round(ctx); err != nil {
		o.log.Error("taking app slots", "err", err)
	}
	go o.loop(lctx)
	return nil
}

// Close gives up every slot and stops listening.
func (o *Owners) Close() {
	if o.cancel != nil {
		o.cancel()
	}
	o.wg.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dropConn(true)
}

// Owns reports whether this replica owns the app in the environment now.
func (o *Owners) Owns(app layout.AppRef, env string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.owned[SlotOf(app, env)]
}

// OwnedSlots returns the slots this replica owns, in order.
func (o *Owners) OwnedSlots() []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]int, 0, o.n)
	for slot, ok := range o.owned {
		if ok {
			out = append(out, slot)
		}
	}
	return out
}

// Owned returns the number of slots this replica owns.
func (o *Owners) Owned() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

// Changed is signalled when this replica gained or lost slots.
func (o *Owners) Changed() <-chan struct{} { return o.changed }

// Logged is signalled when a phase change was committed by any replica.
func (o *Owners) Logged() <-chan struct{} { return o.logged }

// Notices delivers the messages of Notify, of every replica this one's too.
func (o *Owners) Notices() <-chan string { return o.notices }

// Notify sends msg to every replica (PostgreSQL NOTIFY; at most 8,000 bytes).
func (o *Owners) Notify(ctx context.Context, msg string) error {
	if _, err := o.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, o.noticeChannel, msg); err != nil {
		return fmt.Errorf("notifying the replicas: %w", err)
	}
	return nil
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (o *Owners) loop(ctx context.Context) {
	defer o.wg.Done()
	tk := time.NewTicker(o.interval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		if err := o.round(ctx); err != nil && ctx.Err() == nil {
			o.log.Error("keeping app slots", "err", err)
		}
	}
}

// round counts the replicas and takes or gives up slots to hold its share.
func (o *Owners) round(ctx context.Context) (err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	defer func() {
		if err != nil {
			// Whatever this replica held may be gone with its connection:
			// it owns nothing until a round succeeds.
			o.dropConn(false)
			o.set(nil)
		}
	}()
	if o.conn == nil {
		c, err := o.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("connecting: %w", err)
		}
		o.conn = c
		if _, err := c.ExecContext(ctx, `SELECT pg_advisory_lock_shared(CAST($1 AS integer), CAST($2 AS integer))`, o.class, OwnerSlots); err != nil {
			return fmt.Errorf("joining the replicas: %w", err)
		}
	}
	held, err := o.held(ctx)
	if err != nil {
		return err
	}
	var members int
	if err := o.conn.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = $1 AND objid = $2 AND objsubid = 2`, o.class, OwnerSlots).Scan(&members); err != nil {
		return fmt.Errorf("counting the replicas: %w", err)
	}
	share := (OwnerSlots + max(members, 1) - 1) / max(members, 1)
	// Slots in this replica's order: it keeps the first ones it holds and
	// tries the free ones from its own offset, so replicas seldom contend.
	order := make([]int, OwnerSlots)
	for i := range order {
		order[i] = (o.offset + i) % OwnerSlots
	}
	n := len(held)
	for i := len(order) - 1; i >= 0 && n > share; i-- {
		if slot := order[i]; held[slot] {
			if _, err := o.conn.ExecContext(ctx, `SELECT pg_advisory_unlock(CAST($1 AS integer), CAST($2 AS integer))`, o.class, slot); err != nil {
				return fmt.Errorf("giving up slot %d: %w", slot, err)
			}
			delete(held, slot)
			n--
		}
	}
	for _, slot := range order {
		if n >= share {
			break
		}
		if held[slot] {
			continue
		}
		var ok bool
		if err := o.conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(CAST($1 AS integer), CAST($2 AS integer))`, o.class, slot).Scan(&ok); err != nil {
			return fmt.Errorf("taking slot %d: %w", slot, err)
		}
		if ok {
			held[slot] = true
			n++
		}
	}
	o.set(held)
	return nil
}

// held reads the slots this replica's connection holds.
func (o *Owners) held(ctx context.Context) (map[int]bool, error) {
	rows, err := o.conn.QueryContext(ctx, `SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND pid = pg_backend_pid() AND classid = $1 AND objid < $2 AND objsubid = 2 AND mode = 'ExclusiveLock'`, o.class, OwnerSlots)
	if err != nil {
		return nil, fmt.Errorf("reading the slots held: %w", err)
	}
	defer rows.Close()
	held := map[int]bool{}
	for rows.Next() {
		var slot int64
		if err := rows.Scan(&slot); err != nil {
			return nil, fmt.Errorf("reading the slots held: %w", err)
		}
		held[int(slot)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the slots held: %w", err)
	}
	return held, nil
}

// set records the slots owned and signals a change (o.mu held).
func (o *Owners) set(held map[int]bool) {
	var owned [OwnerSlots]bool
	n := 0
	for slot := range held {
		owned[slot] = true
		n++
	}
	if owned == o.owned {
		return
	}
	gained := n > o.n
	o.owned, o.n = owned, n
	o.log.Info("app slots", "owned", n, "of", OwnerSlots, "gained", gained)
	signal(o.changed)
}

// dropConn ends the lock connection; release gives the locks up first
// (the connection is discarded either way, never returned to the pool
// with locks held).
func (o *Owners) dropConn(release bool) {
	if o.conn == nil {
		return
	}
	if release {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = o.conn.ExecContext(ctx, `SELECT pg_advisory_unlock_all()`)
		cancel()
	}
	_ = o.conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = o.conn.Close()
	o.conn = nil
	if release {
		o.set(nil)
	}
}

// listen receives the wake-ups on a connection of its own, reconnecting
// when it breaks; ready is closed once it listens the first time.
func (o *Owners) listen(ctx context.Context, ready chan struct{}) {
	defer o.wg.Done()
	first := true
	for ctx.Err() == nil {
		err := o.listenOnce(ctx, func() {
			if first {
				close(ready)
				first = false
			} else {
				// Wake-ups may have been missed while reconnecting.
				signal(o.logged)
				signal(o.changed)
			}
		})
		if ctx.Err() != nil {
			break
		}
		o.log.Error("listening for the replicas' wake-ups", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	if first {
		close(ready)
	}
}

func (o *Owners) listenOnce(ctx context.Context, listening func()) error {
	c, err := o.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		pc := sc.Conn()
		for _, ch := range []string{o.noticeChannel, o.logChannel} {
			if _, err := pc.Exec(ctx, `LISTEN "`+ch+`"`); err != nil {
				return errors.Join(err, driver.ErrBadConn)
			}
		}
		listening()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				// The connection is left listening: never reuse it.
				return errors.Join(err, driver.ErrBadConn)
			}
			switch n.Channel {
			case o.logChannel:
				signal(o.logged)
			case o.noticeChannel:
				select {
				case o.notices <- n.Payload:
				default:
					o.log.Warn("dropped a replica's wake-up: too many queued (the periodic round resumes its app)")
				}
			}
		}
	})
}
