// A relying party written with go-oidc (Debian's golang-github-coreos-go-oidc-dev) and golang.org/x/oauth2,
// their defaults only: discovery, the code exchange, the id token verified against the JWKS, userinfo,
// and a refresh through oauth2's TokenSource. Run by test/e2e/go-oidc.test.ts, which builds it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	oidc "github.com/coreos/go-oidc"
	"golang.org/x/oauth2"
)

type args struct {
	Issuer       string `json:"issuer"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	RedirectURI  string `json:"redirect_uri"`
	Code         string `json:"code"`
}

func fail(step string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", step, err)
	os.Exit(1)
}

func main() {
	var a args
	if err := json.Unmarshal([]byte(os.Args[1]), &a); err != nil {
		fail("arguments", err)
	}
	ctx := context.Background()
	provider, err := oidc.NewProvider(ctx, a.Issuer)
	if err != nil {
		fail("discovery", err)
	}
	config := oauth2.Config{
		ClientID:     a.ClientID,
		ClientSecret: a.ClientSecret,
		Endpoint:     provider.Endpoint(),
		RedirectURL:  a.RedirectURI,
		Scopes:       []string{oidc.ScopeOpenID, "core_data", "offline_access"},
	}
	token, err := config.Exchange(ctx, a.Code)
	if err != nil {
		fail("code exchange", err)
	}
	verifier := provider.Verifier(&oidc.Config{ClientID: a.ClientID})
	raw, _ := token.Extra("id_token").(string)
	idToken, err := verifier.Verify(ctx, raw)
	if err != nil {
		fail("id token", err)
	}
	info, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(token))
	if err != nil {
		fail("userinfo", err)
	}
	// An access token that has expired as far as oauth2 knows: its TokenSource refreshes it.
	stale := &oauth2.Token{AccessToken: token.AccessToken, RefreshToken: token.RefreshToken, Expiry: time.Now().Add(-time.Minute)}
	refreshed, err := config.TokenSource(ctx, stale).Token()
	if err != nil {
		fail("refresh", err)
	}
	rawAgain, _ := refreshed.Extra("id_token").(string)
	idAgain, err := verifier.Verify(ctx, rawAgain)
	if err != nil {
		fail("refreshed id token", err)
	}
	out, _ := json.Marshal(map[string]interface{}{
		"token_type":        token.TokenType,
		"access_token":      token.AccessToken,
		"refresh_token":     token.RefreshToken,
		"id_subject":        idToken.Subject,
		"id_audience":       idToken.Audience,
		"nonce":             idToken.Nonce,
		"userinfo_subject":  info.Subject,
		"userinfo_email":    info.Email,
		"refreshed_access":  refreshed.AccessToken,
		"refreshed_refresh": refreshed.RefreshToken,
		"refreshed_subject": idAgain.Subject,
	})
	fmt.Println(string(out))
}
