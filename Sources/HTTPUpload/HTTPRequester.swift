import CCurl
import Forwarding
