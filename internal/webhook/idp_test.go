package webhook

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"html/template"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// testPerson is a person the test's OpenID provider signs in.
type testPerson struct {
	ID, Username, Password, Email string
	Groups                        []string
}

// testIdP is a real OpenID Connect provider (zitadel's op package) on a
// loopback TLS listener, with a username and password form as its login
// page. Its ID tokens carry each person's verified email and groups.
type testIdP struct {
	*storage.Storage
	Issuer   string
	ClientID string
	Secret   string
	// Client trusts the provider's certificate.
	Client *http.Client

	people map[string]testPerson
}

// SetUserinfoFromRequest puts the email and groups into the ID token.
func (p *testIdP) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := p.Storage.SetUserinfoFromRequest(ctx, ui, req, scopes); err != nil {
		return err
	}
	u := p.people[req.GetSubject()]
	ui.Email, ui.EmailVerified = u.Email, oidc.Bool(true)
	ui.AppendClaims("groups", u.Groups)
	return nil
}

type testUsers map[string]testPerson

func (u testUsers) user(p testPerson) *storage.User {
	return &storage.User{ID: p.ID, Username: p.Username, Password: p.Password, Email: p.Email, EmailVerified: true,
		FirstName: p.Username, LastName: "Test", PreferredLanguage: language.English}
}

func (u testUsers) GetUserByID(id string) *storage.User {
	if p, ok := u[id]; ok {
		return u.user(p)
	}
	return nil
}

func (u testUsers) GetUserByUsername(name string) *storage.User {
	for _, p := range u {
		if p.Username == name {
			return u.user(p)
		}
	}
	return nil
}

func (u testUsers) ExampleClientID() string { return "service" }

var idpLogin = template.Must(template.New("login").Parse(`<!doctype html><html><head><title>Test provider</title></head><body>
<form method="post" action="/login/username"><input type="hidden" name="id" value="{{.ID}}">
<label>Username <input id="username" name="username"></label>
<label>Password <input id="password" name="password" type="password"></label>
<p id="error">{{.Error}}</p><button id="submit" type="submit">Log in</button></form></body></html>`))

// startIdP starts the provider with people, and the webhook registered as
// a client with its redirect URL.
func startIdP(t testing.TB, redirectURL string, people ...testPerson) *testIdP {
	t.Helper()
	users := testUsers{}
	for _, p := range people {
		users[p.ID] = p
	}
	p := &testIdP{ClientID: "fleetwright", Secret: rand.Text(), people: users}
	p.Storage = storage.NewStorageWithClients(users, map[string]*storage.Client{
		p.ClientID: storage.WebClient(p.ClientID, p.Secret, redirectURL)})
	ts := httptest.NewUnstartedServer(nil)
	ts.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	p.Issuer = ts.URL
	p.Client = ts.Client()
	var key [32]byte
	_, _ = rand.Read(key[:])
	provider, err := op.NewProvider(&op.Config{CryptoKey: key, CryptoKeyId: "k1", CodeMethodS256: true, AuthMethodPost: true,
		SupportedUILocales: []language.Tag{language.English}}, p, op.StaticIssuer(p.Issuer))
	if err != nil {
		t.Fatal(err)
	}
	callback := op.AuthCallbackURL(provider)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login/username", func(w http.ResponseWriter, r *http.Request) {
		_ = idpLogin.Execute(w, map[string]string{"ID": r.URL.Query().Get("authRequestID")})
	})
	mux.Handle("POST /login/username", op.NewIssuerInterceptor(provider.IssuerFromRequest).HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.FormValue("id")
		if err := p.CheckUsernamePassword(r.FormValue("username"), r.FormValue("password"), id); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			_ = idpLogin.Execute(w, map[string]string{"ID": id, "Error": "Wrong username or password."})
			return
		}
		http.Redirect(w, r, callback(r.Context(), id), http.StatusFound)
	}))
	mux.Handle("/", provider)
	ts.Config.Handler = mux
	return p
}

// oidcConfig is the webhook's configuration for this provider.
func (p *testIdP) oidcConfig(redirectURL string, access *Access) OIDCConfig {
	return OIDCConfig{Issuer: p.Issuer, ClientID: p.ClientID, ClientSecret: p.Secret, RedirectURL: redirectURL,
		Scopes: []string{"openid", "email", "profile"}, Access: access, HTTPClient: p.Client}
}
