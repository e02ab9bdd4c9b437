from storbench.cli import main

main()
