from compat.migrate import console_main

console_main()
