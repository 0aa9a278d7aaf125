"""`hollywood-gin play --web`: the match in a browser, on the same `Session` as the terminal program.

`view` serialises what the human may know, `matches` keeps each match behind an unguessable id, `app` is the
Starlette app (the page and its JSON API), `server` binds the port and runs uvicorn. Needs the `[web]` extra;
the page (static/) is plain HTML, CSS and JavaScript shipped in the package, with nothing fetched from outside.
"""
