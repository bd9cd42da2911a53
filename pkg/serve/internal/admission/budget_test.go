package admission

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/prometheus/client_golang/prometheus"
)

// Admit takes cost at once or not at all, as a call does when the budget has no wait.
func (b *Budget) Admit(cost int64) (*Grant, bool) { return b.admit(context.Background(), "", cost, 0) }

// testGroup is a group call's route of at most 100,000 entries, costed by a model of the figures a
// service measured (its own tests pin them against its handler).
var testGroup = &Group{Entries: 100000, Cost: GroupCost{
	JSON: FrontCost{PerByte: 16, PerEntry: 1000, MinEntryBytes: 8}, Proto: FrontCost{PerByte: 24, PerEntry: 320, MinEntryBytes: 2}, Base: 256 << 10,
}}

// TestCostOfBody: once a JSON group body is read, it is costed by the entries its brackets can
// hold, never more than by its size.
func TestCostOfBody(t *testing.T) {
	t.Parallel()
	b := New(1<<30, prometheus.NewRegistry(), "test")
	for _, tc := range []struct {
		name  string
		group *Group
		body  string
		want  int64
	}{
		{"two object entries", testGroup, `{"entries":[{"a":1},{"a":2}],"cuts":[1]}`, 256<<10 + 1000*5},
		{"two array entries", testGroup, `{"groupEntries":[[1,1,1],[2,2,2]]}`, 256<<10 + 1000*4},
		{"brackets beyond an entry every 8 bytes", testGroup, `[[[[[[[[[[[[[[[[`, 256<<10 + 1000*2},
		{"another route's small body costs nothing", nil, `{"a":[[1]]}`, 0},
		{"another route's body of 64 KiB costs its size", nil, strings.Repeat("[", SmallRequestBytes), 30 * SmallRequestBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := b.CostOfBody(tc.group, []byte(tc.body)); got != tc.want {
				t.Errorf("got %d; want %d", got, tc.want)
			}
		})
	}
}

func TestCost(t *testing.T) {
	t.Parallel()
	b := New(1<<30, prometheus.NewRegistry(), "test")
	for _, tc := range []struct {
		name  string
		group *Group
		n     int64
		json  bool
		want  int64
	}{
		{"small other request skips the budget", nil, SmallRequestBytes - 1, true, 0},
		{"other request at the threshold", nil, SmallRequestBytes, true, 30 * SmallRequestBytes},
		{"largest other request", nil, 1 << 20, true, 30 << 20},
		{"small JSON group: an entry every 8 bytes", testGroup, 3000, true, 256<<10 + 1000*375},
		{"JSON group of 100,000 typical entries: the entry limit", testGroup, 6081024, true, 256<<10 + 1000*100000},
		{"JSON group past the entry limit: per byte", testGroup, 7000000, true, 256<<10 + 16*7000000},
		{"group of 100,000 typical entries over gRPC", testGroup, 2900035, false, 256<<10 + 24*2900035},
		{"empty protobuf entries: 2 bytes each", testGroup, 20000, false, 256<<10 + 320*10000},
		{"entries beyond the limit cost per byte only", testGroup, 900000, false, 256<<10 + max(24*900000, 320*100000)},
		{"a group's small body costs its base at least", &Group{Entries: 10, Cost: GroupCost{JSON: FrontCost{1, 1, 1}, Proto: FrontCost{1, 1, 1}, Base: 7}}, 0, true, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := b.Cost(tc.group, tc.n, tc.json); got != tc.want {
				t.Errorf("cost(%v, %d): got %d; want %d", tc.group != nil, tc.n, got, tc.want)
			}
		})
	}
}

// TestGroupCostCheck: a model is refused when a front lacks a factor (a large call would cost
// nothing, or its entries would divide by zero) or its base is negative; the least valid passes.
func TestGroupCostCheck(t *testing.T) {
	t.Parallel()
	one := FrontCost{PerByte: 1, PerEntry: 1, MinEntryBytes: 1}
	for _, tc := range []struct {
		name string
		m    GroupCost
		want string
	}{
		{"every factor 1, no base", GroupCost{JSON: one, Proto: one}, ""},
		{"no model", GroupCost{}, "JSON needs"},
		{"JSON per byte 0", GroupCost{JSON: FrontCost{0, 1, 1}, Proto: one}, "JSON needs"},
		{"JSON per entry 0", GroupCost{JSON: FrontCost{1, 0, 1}, Proto: one}, "JSON needs"},
		{"proto entry of 0 bytes", GroupCost{JSON: one, Proto: FrontCost{1, 1, 0}}, "Proto needs"},
		{"negative base", GroupCost{JSON: one, Proto: one, Base: -1}, "Base below 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.m.Check()
			if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(got, tc.want)) {
				t.Errorf("got %v; want %q", err, tc.want)
			}
		})
	}
}

func TestBudgetAdmit(t *testing.T) {
	t.Parallel()
	b := New(100, prometheus.NewRegistry(), "forecast")
	a1, ok := b.Admit(60)
	if !ok || b.Admitted() != 60 {
		t.Fatalf("first admit: got ok=%v in use %d; want true 60", ok, b.Admitted())
	}
	if _, ok := b.Admit(41); ok {
		t.Errorf("admit 41 with 40 free: got ok; want refused")
	}
	a2, ok := b.Admit(40)
	if !ok || b.Admitted() != 100 {
		t.Fatalf("admit 40 with 40 free: got ok=%v in use %d; want true 100", ok, b.Admitted())
	}
	a1.Release()
	a1.Release() // a second release gives nothing back twice
	if b.Admitted() != 40 {
		t.Errorf("after release: got %d in use; want 40", b.Admitted())
	}
	a2.Release()
	if b.Admitted() != 0 {
		t.Errorf("after both released: got %d in use; want 0", b.Admitted())
	}
	big, ok := b.Admit(1000) // larger than the whole budget: runs alone
	if !ok || b.Admitted() != 100 {
		t.Errorf("admit beyond capacity into an empty budget: got ok=%v in use %d; want true 100", ok, b.Admitted())
	}
	if _, ok := b.Admit(1); ok {
		t.Errorf("admit 1 beside a request that took the whole budget: got ok; want refused")
	}
	big.Release()
	free, ok := b.Admit(0)
	if !ok || b.Admitted() != 0 {
		t.Errorf("admit 0: got ok=%v in use %d; want true 0", ok, b.Admitted())
	}
	free.Release()
}

func TestMemoryBudget(t *testing.T) {
	t.Parallel()
	gib := func() (uint64, error) { return 1 << 30, nil }
	for _, tc := range []struct {
		name  string
		cfg   setting
		limit func() (uint64, error)
		want  int64
	}{
		{"configured", cfgOf(64<<20, 0.5), gib, 64 << 20},
		{"fraction of the container limit", cfgOf(0, 0.5), gib, 512 << 20},
		{"another fraction", cfgOf(0, 0.25), gib, 256 << 20},
		{"no limit", cfgOf(0, 0.5), func() (uint64, error) { return 0, memlimit.ErrNoLimit }, 512 << 20},
		{"unlimited cgroup", cfgOf(0, 0.5), func() (uint64, error) { return math.MaxInt64, nil }, 512 << 20},
		{"unreadable cgroup", cfgOf(0, 0.5), func() (uint64, error) { return 0, errors.New("no cgroup") }, 512 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got, _ := Size(tc.cfg.MemoryBudget, tc.cfg.MemoryBudgetFraction, tc.limit); got != tc.want {
				t.Errorf("got %d; want %d", got, tc.want)
			}
		})
	}
}

// setting is the two settings the budget's size comes from.
type setting struct {
	MemoryBudget         int64
	MemoryBudgetFraction float64
}

func cfgOf(budget int64, fraction float64) setting { return setting{budget, fraction} }
