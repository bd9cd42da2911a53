package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// wireRequest is the JSON body of POST /api/score/adaptive/next (docs/api.md).
type wireRequest struct {
	Framework     string             `json:"framework"`
	Items         []wireItem         `json:"items"`
	Pool          []string           `json:"pool,omitempty"`
	Exclude       []string           `json:"exclude,omitempty"`
	Strands       map[string]float64 `json:"strands,omitempty"`
	Randomesque   *int               `json:"randomesque,omitempty"`
	Seed          *int64             `json:"seed,omitempty"`
	TargetSuccess *float64           `json:"targetSuccess,omitempty"`
	Stop          *wireStop          `json:"stop,omitempty"`
	PriorAbility  *float64           `json:"priorAbility,omitempty"`
	PriorSD       *float64           `json:"priorUncertainty,omitempty"`
	ElapsedDays   *float64           `json:"elapsedDays,omitempty"`
	Grade         *int               `json:"grade,omitempty"`
	TimeOfYear    *string            `json:"timeOfYear,omitempty"`
}

type wireItem struct {
	ID     string `json:"id"`
	Result int    `json:"result"`
}

type wireStop struct {
	MaxItems          *int     `json:"maxItems,omitempty"`
	MinItems          *int     `json:"minItems,omitempty"`
	TargetUncertainty *float64 `json:"targetUncertainty,omitempty"`
	Cut               *float64 `json:"cut,omitempty"`
	Confidence        *float64 `json:"confidence,omitempty"`
}

// wireAnswer is the answer's JSON. ability and uncertainty are whole numbers on the wire, so a
// simulation through the service reports the rounded figures a caller sees.
type wireAnswer struct {
	Next *struct {
		ID     string `json:"id"`
		Strand string `json:"strand"`
	} `json:"next"`
	StopReason    string  `json:"stopReason"`
	Ability       float64 `json:"ability"`
	Uncertainty   float64 `json:"uncertainty"`
	ItemsAnswered int     `json:"itemsAnswered"`
}

// remote answers each step through the service at base with token; the items it names are
// looked up in bk (the service's content) for their difficulty.
func remote(client *http.Client, base, token string, bk *measure.Bank) measure.NextFunc {
	url := strings.TrimSuffix(base, "/") + "/api/score/adaptive/next"
	framework := bk.Framework().Name
	lookup := map[string]measure.Item{}
	return func(ctx context.Context, req *measure.AdaptiveRequest) (measure.Step, error) {
		body, err := json.Marshal(toWire(framework, req))
		if err != nil {
			return measure.Step{}, fmt.Errorf("encode request: %w", err)
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return measure.Step{}, err
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(hr)
		if err != nil {
			return measure.Step{}, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return measure.Step{}, fmt.Errorf("read answer: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return measure.Step{}, fmt.Errorf("%s answered %s: %s", url, resp.Status, bytes.TrimSpace(data))
		}
		var a wireAnswer
		if err := json.Unmarshal(data, &a); err != nil {
			return measure.Step{}, fmt.Errorf("decode answer: %w", err)
		}
		step := measure.Step{StopReason: a.StopReason, Answered: a.ItemsAnswered,
			Estimate: measure.Estimate{Ability: a.Ability, Uncertainty: a.Uncertainty}}
		if a.Next != nil {
			item, ok := lookup[a.Next.ID]
			if !ok {
				if item, ok = bk.Item(a.Next.ID); !ok {
					return measure.Step{}, fmt.Errorf("the service named item %q, which the local bundle does not have (use the service's bundle: -bundle)", a.Next.ID)
				}
				lookup[a.Next.ID] = item
			}
			step.Next = &item
		}
		return step, nil
	}
}

func toWire(framework string, r *measure.AdaptiveRequest) wireRequest {
	w := wireRequest{
		Framework: framework, Items: make([]wireItem, len(r.Items)),
		Pool: r.Pool, Exclude: r.Exclude, Strands: r.Strands,
		Randomesque: r.Randomesque, Seed: r.Seed, TargetSuccess: r.TargetSuccess,
		PriorAbility: r.PriorAbility, PriorSD: r.PriorUncertainty, ElapsedDays: r.ElapsedDays,
		Grade: r.Grade, TimeOfYear: r.TimeOfYear,
	}
	for i, it := range r.Items {
		w.Items[i].ID = it.ID
		w.Items[i].Result = it.Points()
	}
	if s := r.Stop; s != (measure.StopRules{}) {
		w.Stop = &wireStop{s.MaxItems, s.MinItems, s.TargetUncertainty, s.Cut, s.Confidence}
	}
	return w
}
