package ops

import (
	"context"

	"github.com/hostlink/hostlink/internal/policy"
)

// Group is one package's operations over its service S. Each operation's
// file adds itself to the group (Add, in an init function), so that adding
// an operation is that one file; the package's Register adds the whole
// group to a registry, bound to its service.
type Group[S any] struct {
	adds  []func(*Registry, S)
	specs []Spec
}

// Add declares an operation of g: its spec and its handler, a method
// expression of S such as (*Service).readFile.
func Add[S, In, Out any](g *Group[S], spec Spec, h func(S, context.Context, *Call, In) (Out, error)) {
	AddIf(g, nil, spec, h)
}

// AddIf is Add for an operation offered only when when(s) holds (an
// opt-in of the local user's); nil means always.
func AddIf[S, In, Out any](g *Group[S], when func(S) bool, spec Spec, h func(S, context.Context, *Call, In) (Out, error)) {
	g.specs = append(g.specs, spec)
	g.adds = append(g.adds, func(r *Registry, s S) {
		if when != nil && !when(s) {
			return
		}
		Register(r, spec, func(ctx context.Context, c *Call, in In) (Out, error) { return h(s, ctx, c, in) })
	})
}

// AddDescribed is Add for an operation whose request goes to the handler
// as decoded and is described by the function describe rather than a
// Describe method: a request type in a types-only package (internal/*api)
// cannot have one.
func AddDescribed[S, In, Out any](g *Group[S], spec Spec, describe func(S, In, policy.DescribeContext) (policy.Action, error), h func(S, context.Context, *Call, In) (Out, error)) {
	AddDescribedIf(g, nil, spec, describe, h)
}

// AddDescribedIf is AddDescribed for an operation offered only when
// when(s) holds, as AddIf.
func AddDescribedIf[S, In, Out any](g *Group[S], when func(S) bool, spec Spec, describe func(S, In, policy.DescribeContext) (policy.Action, error), h func(S, context.Context, *Call, In) (Out, error)) {
	g.specs = append(g.specs, spec)
	g.adds = append(g.adds, func(r *Registry, s S) {
		if when != nil && !when(s) {
			return
		}
		RegisterNormalized[In, In](r, spec, nil,
			func(in In, dc policy.DescribeContext) (policy.Action, error) { return describe(s, in, dc) },
			func(ctx context.Context, c *Call, in In) (Out, error) { return h(s, ctx, c, in) })
	})
}

// AddNormalized declares an operation of g whose request is normalized
// once, by normalize, into what both its description (describe) and its
// handler take: see RegisterNormalized.
func AddNormalized[S, In, N, Out any](g *Group[S], spec Spec, normalize func(S, In) (N, error), describe func(S, N, policy.DescribeContext) (policy.Action, error), h func(S, context.Context, *Call, N) (Out, error)) {
	g.specs = append(g.specs, spec)
	g.adds = append(g.adds, func(r *Registry, s S) {
		RegisterNormalized(r, spec,
			func(in In) (N, error) { return normalize(s, in) },
			func(n N, dc policy.DescribeContext) (policy.Action, error) { return describe(s, n, dc) },
			func(ctx context.Context, c *Call, n N) (Out, error) { return h(s, ctx, c, n) })
	})
}

// Register adds every operation of g to r, bound to s.
func (g *Group[S]) Register(r *Registry, s S) {
	for _, add := range g.adds {
		add(r, s)
	}
}

// Specs returns the specs of g's operations, for a registry that names
// them disabled (Registry.Disable) when the local user has not enabled
// the group.
func (g *Group[S]) Specs() []Spec { return g.specs }
