package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/yardstick-dev/yardstick/bench/internal/procs"
	"github.com/yardstick-dev/yardstick/internal/proc"
	"github.com/yardstick-dev/yardstick/pkg/measure"
)

// groupBody is a group forecast of n students, as objects.
func groupBody(n int) []byte {
	r := rand.New(rand.NewPCG(7, 11))
	var b strings.Builder
	b.WriteString(`{"studentData":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"priorAbility":` + strconv.Itoa(300+r.IntN(1000)) + `,"priorUncertainty":` + strconv.Itoa(30+r.IntN(60)) +
			`,"elapsedDays":` + strconv.Itoa(r.IntN(400)) + `}`)
	}
	b.WriteString(`],"testUncertainty":32.5,"cutLevels":[500,650,800]}`)
	return []byte(b.String())
}

// plainGroup is the reference: encoding/json into plain structs, the same pkg/measure call, the
// answer encoded by encoding/json.
func plainGroup(body []byte, fw *measure.Framework) ([]byte, error) {
	var req struct {
		StudentData []struct {
			PriorAbility     float64 `json:"priorAbility"`
			PriorUncertainty float64 `json:"priorUncertainty"`
			ElapsedDays      float64 `json:"elapsedDays"`
		} `json:"studentData"`
		TestUncertainty float64   `json:"testUncertainty"`
		CutLevels       []float64 `json:"cutLevels"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	students := make([]measure.Student, len(req.StudentData))
	for i, s := range req.StudentData {
		students[i] = measure.Student{Prior: measure.Normal{Mean: s.PriorAbility, SD: s.PriorUncertainty}, ElapsedDays: s.ElapsedDays}
	}
	g := fw.Group(students, req.TestUncertainty, req.CutLevels)
	type student struct {
		Ability        float64   `json:"ability"`
		AbilityDisplay string    `json:"abilityDisplay"`
		Uncertainty    float64   `json:"uncertainty"`
		Probabilities  []float64 `json:"probabilities"`
	}
	out := struct {
		Forecasts struct {
			Students []student `json:"students"`
			Group    struct {
				GroupAbility            float64   `json:"groupAbility"`
				GroupUncertainty        float64   `json:"groupUncertainty"`
				GroupProportionPerLevel []float64 `json:"GroupProportionPerLevel"`
				GroupStderrPerLevel     []float64 `json:"groupStderrPerLevel"`
			} `json:"group"`
		} `json:"forecasts"`
		APIVersion string `json:"apiVersion"`
		Framework  string `json:"framework"`
	}{APIVersion: "dev", Framework: fw.Name}
	out.Forecasts.Students = make([]student, len(g.Students))
	for i, s := range g.Students {
		out.Forecasts.Students[i] = student{s.Ability, fw.Display(s.Ability), s.Uncertainty, s.Probabilities}
	}
	out.Forecasts.Group.GroupAbility, out.Forecasts.Group.GroupUncertainty = g.Ability, g.Uncertainty
	out.Forecasts.Group.GroupProportionPerLevel, out.Forecasts.Group.GroupStderrPerLevel = g.Proportions, g.StdErrs
	return json.Marshal(out)
}

// measureGroup times one group forecast over the JSON front (a fresh forecast process, so its
// peak RSS growth is this request's) against the reference in this process.
func measureGroup(ctx context.Context, o options, f *figures) error {
	body := groupBody(o.students)
	fw, _ := measure.Demo().Framework("lexile")
	var refs []float64
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		if _, err := plainGroup(body, fw); err != nil {
			return err
		}
		refs = append(refs, time.Since(t0).Seconds())
	}
	f.groupRef = median(refs)

	httpAddr, _ := proc.FreePort()
	grpcAddr, _ := proc.FreePort()
	env := []string{"YARDSTICK_DEV=true", "YARDSTICK_HTTP_ADDR=" + httpAddr, "YARDSTICK_GRPC_ADDR=" + grpcAddr}
	forecast, err := procs.Start(ctx, filepath.Join(o.bin, "forecast"), nil, env, httpAddr, procs.HTTPReady("http://"+httpAddr+"/readyz"))
	if err != nil {
		return err
	}
	defer forecast.Stop()
	tok, err := token(httpAddr)
	if err != nil {
		return err
	}
	url := "http://" + httpAddr + "/api/forecast/reading/group"
	client := &http.Client{Timeout: time.Minute}
	if _, err := post(client, url, groupBody(100), "Authorization", "Bearer "+tok); err != nil {
		return err
	}
	rss, err := forecast.Memory("VmRSS")
	if err != nil {
		return err
	}
	var times []float64
	var answer []byte
	var hwm float64
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		if answer, err = post(client, url, body, "Authorization", "Bearer "+tok); err != nil {
			return err
		}
		times = append(times, time.Since(t0).Seconds())
		if i == 0 { // the peak of the first request is that request's
			if hwm, err = forecast.Memory("VmHWM"); err != nil {
				return err
			}
		}
	}
	f.groupJSON = median(times)
	f.groupRSS = hwm - rss
	f.groupPayload = float64(len(body) + len(answer))
	if !strings.Contains(string(answer[len(answer)-200:]), `"framework":"lexile"`) {
		return fmt.Errorf("unexpected group answer ending %s", answer[len(answer)-200:])
	}
	return nil
}
