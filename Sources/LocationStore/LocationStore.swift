import CSQLite
import Forwarding
import GPSModel
