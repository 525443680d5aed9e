package link

import (
	"context"

	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/link/wire"
)

// Applications: APP_LIST_REQUEST and APP_LAUNCH, converted to and from
// computer_apps and computer_launch_app (whose budget bounds launches
// machine-wide).

func (d *dataChannel) appList(ctx context.Context, r *request) (string, any, error) {
	if _, err := wire.DecodePayload[wire.AppListRequest](r.e); err != nil {
		return "", nil, err
	}
	out, err := r.call(ctx, desktopapi.AppsArgs{})
	if err != nil {
		return "", nil, err
	}
	res := out.(desktopapi.AppsResult)
	resp := wire.AppListResponse{Apps: make([]wire.AppEntry, 0, len(res.Running))}
	for _, a := range res.Running {
		e := wire.AppEntry{PID: a.PID, Name: a.Name, IsFrontmost: a.Frontmost, WindowCount: a.WindowCount}
		if a.AppID != "" {
			e.BundleID = ptr(a.AppID)
		}
		if a.ExecutablePath != "" {
			e.ExecutablePath = ptr(a.ExecutablePath)
		}
		resp.Apps = append(resp.Apps, e)
	}
	return wire.TypeAppListResponse, resp, nil
}

func (d *dataChannel) appLaunch(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.AppLaunch](r.e)
	if err != nil {
		return "", nil, err
	}
	a := desktopapi.LaunchArgs{Activate: p.Activate == nil || *p.Activate, Args: p.Args}
	if p.BundleID != nil {
		a.AppID = *p.BundleID
	}
	if p.ExecutablePath != nil {
		a.ExecutablePath = *p.ExecutablePath
	}
	out, err := r.call(ctx, a)
	if err != nil {
		return "", nil, err
	}
	return wire.TypeAck, wire.AppLaunched{OK: true, PID: out.(desktopapi.LaunchResult).PID}, nil
}
