from llm_aai.cli.audit import main

raise SystemExit(main())
