package proclive

import (
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	rec := Identity{OS: "linux", PID: 4242, Start: 777, Boot: "boot-a", Host: "dev", PIDNS: "pid:[1]", Name: "claude"}
	here := observation{OS: "linux", Host: "dev", Boot: "boot-a", PIDNS: "pid:[1]",
		Presence: presenceFound, Start: 777, Threads: 12}
	with := func(f func(*observation)) observation { o := here; f(&o); return o }
	rec2 := func(f func(*Identity)) Identity { r := rec; f(&r); return r }

	tests := []struct {
		name   string
		rec    Identity
		obs    observation
		want   Liveness
		reason string // a word the reason must contain
	}{
		{"running", rec, here, Alive, "running"},
		{"no such process", rec, with(func(o *observation) { o.Presence = presenceGone }), Dead, "no longer exists"},
		{"pid reused", rec, with(func(o *observation) { o.Start = 778 }), Dead, "reused"},
		{"zombie", rec, with(func(o *observation) { o.Zombie, o.Threads = true, 1 }), Dead, "zombie"},
		{"zombie without thread count", rec, with(func(o *observation) { o.Zombie, o.Threads = true, 0 }), Dead, "zombie"},
		{"zombie leader with a live thread", rec, with(func(o *observation) { o.Zombie, o.Threads = true, 2 }), Alive, "running"},
		{"zombie at a reused pid", rec, with(func(o *observation) { o.Zombie, o.Threads, o.Start = true, 1, 5 }), Dead, "reused"},
		{"rebooted", rec, with(func(o *observation) { o.Boot = "boot-b" }), Dead, "rebooted"},
		{"rebooted, pid namespace differs too", rec, with(func(o *observation) { o.Boot = "boot-b"; o.PIDNS = "pid:[9]" }), Dead, "rebooted"},
		{"other host", rec, with(func(o *observation) { o.Host = "ci-7" }), Unknown, "other host"},
		{"other host and boot", rec, with(func(o *observation) { o.Host = "ci-7"; o.Boot = "boot-b"; o.Presence = presenceGone }), Unknown, "other host"},
		{"other os", rec, with(func(o *observation) { o.OS = "darwin"; o.Presence = presenceGone }), Unknown, "darwin"},
		{"other pid namespace", rec, with(func(o *observation) { o.PIDNS = "pid:[2]"; o.Presence = presenceGone }), Unknown, "pid namespace"},
		{"pid namespace unreadable", rec, with(func(o *observation) { o.PIDNS = "" }), Unknown, "pid namespace"},
		{"boot id unreadable", rec, with(func(o *observation) { o.Boot = ""; o.Presence = presenceGone }), Unknown, "boot id"},
		{"no boot id recorded", rec2(func(r *Identity) { r.Boot = "" }), with(func(o *observation) { o.Presence = presenceGone }), Unknown, "boot id"},
		{"platform without boot ids", rec2(func(r *Identity) { r.Boot = "" }), with(func(o *observation) { o.Boot = ""; o.Presence = presenceGone }), Dead, "no longer exists"},
		{"host unreadable", rec, with(func(o *observation) { o.Host = ""; o.Presence = presenceGone }), Unknown, "host"},
		{"no host recorded", rec2(func(r *Identity) { r.Host = "" }), here, Unknown, "host"},
		{"permission denied", rec, with(func(o *observation) {
			o.Presence, o.Detail = presenceUnknown, "pid 4242 exists but is hidden from this user (hidepid?)"
		}), Unknown, "hidepid"},
		{"unsupported platform", rec, with(func(o *observation) { o.Presence, o.Detail = presenceUnknown, "not supported" }), Unknown, "not supported"},
		{"no pid recorded", rec2(func(r *Identity) { r.PID = 0 }), with(func(o *observation) { o.Presence = presenceGone }), Unknown, "pid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := decide(tt.rec, tt.obs)
			if v.Liveness != tt.want || !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("decide = %v %q, want %v with %q", v.Liveness, v.Reason, tt.want, tt.reason)
			}
		})
	}
}

func TestLivenessString(t *testing.T) {
	for l, want := range map[Liveness]string{Alive: "alive", Dead: "dead", Unknown: "unknown", Liveness(9): "unknown"} {
		if got := l.String(); got != want {
			t.Errorf("Liveness(%d).String() = %q, want %q", int(l), got, want)
		}
	}
}
