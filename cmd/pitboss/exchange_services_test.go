package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/sandbox/bridge"
)

func TestExchangeStartsTheCatalogueDataAndBridgeServices(t *testing.T) {
	env := map[string]string{envOperatorToken: "test-operator-token"}
	r := startExchangeEnv(t, env, "--addr", "127.0.0.1:0", "--ephemeral")
	cat, dat, br := r.url(t, "catalogue service"), r.url(t, "data service"), r.url(t, "bridge service")
	var events []api.CatalogueEvent
	if st, b := get(t, cat+"/events?limit=500", nil); st != 200 || json.Unmarshal(b, &events) != nil || len(events) != 13 {
		t.Fatalf("catalogue /events: %d %.200s", st, b)
	}
	if st, b := get(t, dat+"/v1/leaderboard", nil); st != 200 || string(b) != "[]\n" {
		t.Fatalf("data /v1/leaderboard: %d %s", st, b)
	}
	var sa api.SupportedAssets
	if st, b := get(t, br+"/supported-assets", nil); st != 200 || json.Unmarshal(b, &sa) != nil || sa.PlatformToken.Address != bridge.DefaultTokenAddress.String() {
		t.Fatalf("bridge /supported-assets: %d %s", st, b)
	}

	// A simulated on-chain deposit through the CLI credits the wallet; it needs the
	// operator token (the exchange runs without --sim).
	wallet := "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
	code, _, errOut := runCLI(t, "bridge", "deposit", "--to", wallet, "--amount", "12.5", "--bridge", br)
	if code == 0 || !strings.Contains(errOut, "invalid authorization") || !strings.Contains(errOut, "operator token") {
		t.Fatalf("bridge deposit without the token: %d %s", code, errOut)
	}
	code, out, errOut := runCLIEnv(t, env, "bridge", "deposit", "--to", wallet, "--amount", "12.5", "--bridge", br)
	if code != 0 || !strings.Contains(out, "CREDITED") || !strings.Contains(out, "credited 12.5") {
		t.Fatalf("bridge deposit: %d %s %s", code, out, errOut)
	}
	code, out, errOut = runCLIEnv(t, env, "bridge", "deposit", "--to", wallet, "--base-units", "1500000000000", "--json", "--bridge", br)
	var rec api.DepositRecord
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.CreditedAmount != 1 {
		t.Fatalf("bridge deposit of 1.5 micro-units: %d %s %s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "bridge", "status", "--json", "--bridge", br, wallet)
	var st api.BridgeStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || len(st.Deposits) != 2 {
		t.Fatalf("bridge status: %d %s", code, out)
	}
	code, out, _ = runCLI(t, "bridge", "status", "--bridge", br, wallet)
	if code != 0 || !strings.Contains(out, "deposits (2)") || !strings.Contains(out, "withdrawals (0)") {
		t.Fatalf("bridge status text: %d %s", code, out)
	}
	if code := r.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, r.errOut)
	}
}

func TestExchangeServiceFlags(t *testing.T) {
	r := startExchange(t, "--addr", "127.0.0.1:0", "--ephemeral", "--data-addr", "", "--bridge-withdraw-fee", "0",
		"--bridge-bnb-price", "300")
	br := r.url(t, "bridge service")
	r.url(t, "catalogue service")
	if strings.Contains(r.out.String(), "data service") {
		t.Fatalf("an empty --data-addr still started the data service: %s", r.out)
	}
	var sa api.SupportedAssets
	if st, b := get(t, br+"/supported-assets", nil); st != 200 || json.Unmarshal(b, &sa) != nil || sa.SupportedAssets[0].WithdrawFeeBaseUnit != "0" {
		t.Fatalf("fee 0: %d %s", st, b)
	}
	r.stop(t)
	code, _, errOut := runCLI(t, "exchange", "--addr", "127.0.0.1:0", "--ephemeral", "--bridge-bnb-price", "-1")
	if code != 2 || !strings.Contains(errOut, "--bridge-bnb-price") {
		t.Fatalf("bad BNB price: %d %s", code, errOut)
	}
}

func TestBridgeCommandErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"bridge"}, 2, "Usage: pitboss bridge"},
		{[]string{"bridge", "mint"}, 2, `unknown bridge subcommand "mint"`},
		{[]string{"bridge", "deposit", "--amount", "1"}, 2, `--to "" is not an address`},
		{[]string{"bridge", "deposit", "--to", "0x90F79bf6EB2c4f870365E785982E1f101E93b906"}, 2, "give --amount or --base-units"},
		{[]string{"bridge", "deposit", "--to", "0x90F79bf6EB2c4f870365E785982E1f101E93b906", "--amount", "1e3"}, 2, "is not a decimal number"},
		{[]string{"bridge", "deposit", "--to", "0x90F79bf6EB2c4f870365E785982E1f101E93b906", "--amount", "1", "--base-units", "1"}, 2, "exclude each other"},
		{[]string{"bridge", "deposit", "--to", "0x90F79bf6EB2c4f870365E785982E1f101E93b906", "--amount", "1", "--bridge", "ftp://x"}, 2, "is not an http(s) URL"},
		{[]string{"bridge", "deposit", "--to", "0x90F79bf6EB2c4f870365E785982E1f101E93b906", "--amount", "1", "--bridge", "http://127.0.0.1:1"}, 1, "bridge unreachable"},
		{[]string{"bridge", "status"}, 2, "takes one address"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(out+errOut, c.msg) {
				t.Fatalf("code %d, out %q, err %q; want %d and %q", code, out, errOut, c.code, c.msg)
			}
		})
	}
}

// TestExchangeAuthenticatesTheServicesL2Routes checks that the real `pitboss exchange`
// hands its CLOB L2 verifier to the bridge: a signed withdrawal preview succeeds and an
// unsigned one is refused with the CLOB's own message.
func TestExchangeAuthenticatesTheServicesL2Routes(t *testing.T) {
	r := startExchange(t, "--addr", "127.0.0.1:0", "--ephemeral")
	clobURL, br := r.url(t, "CLOB service"), r.url(t, "bridge service")
	signer, err := auth.NewKeySignerFromHex("ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
	if err != nil {
		t.Fatal(err)
	}
	defer signer.Close()
	c, err := clob.New(clob.Config{CLOBURL: clobURL, BridgeURL: br, Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	creds, err := c.CreateAPIKey(ctx, clob.KeyOptions{})
	if err != nil {
		t.Fatalf("create API key: %v", err)
	}
	if err := c.SetCredentials(creds); err != nil {
		t.Fatal(err)
	}
	assets, err := c.Bridge().SupportedAssets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := api.WithdrawRequest{
		Address:        signer.Address().String(),
		ToChainID:      "56",
		ToTokenAddress: assets.PlatformToken.Address,
		RecipientAddr:  "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
		Amount:         "1000000000000000000",
	}
	prev, err := c.Bridge().WithdrawPreview(ctx, req)
	if err != nil {
		t.Fatalf("signed withdrawal preview refused: %v", err)
	}
	if !prev.CanWithdraw {
		t.Fatalf("preview of 1 token out of the paper balance: %+v", prev)
	}

	body, _ := json.Marshal(req)
	resp, err := http.Post(br+"/withdraw/preview", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(b), "L2 authentication failure") {
		t.Fatalf("unsigned preview: %d %s", resp.StatusCode, b)
	}
}
