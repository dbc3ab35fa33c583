from raytracer_app.cli import main

raise SystemExit(main())
