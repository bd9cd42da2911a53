package grpcguard

import "context"

// SetStepHook has hook run in each step of every unary call g serves (read, observe, message),
// before it serves: a test's way into code a call cannot otherwise make fail.
func SetStepHook(g *Guard, hook func(ctx context.Context, step string)) { g.stepHook = hook }
